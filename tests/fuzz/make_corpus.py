#!/usr/bin/env python3
"""Writes the seed corpus of each fuzz target under tests/fuzz/corpus/ (small files, committed).

Run from anywhere: python3 tests/fuzz/make_corpus.py. Deterministic: the same files every time.
"""
import gzip
import json
import os
import struct

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name), "wb") as f:
        f.write(data)


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape, raw bytes)] -> the file's bytes, as the reference writer lays it out."""
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * ((8 - len(head) % 8) % 8)
    return struct.pack("<Q", len(head)) + head + data


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def f64(*v):
    return struct.pack("<%dd" % len(v), *v)


# ---------------------------------------------------------------- safetensors
write("safetensors", "two_tensors", safetensors(
    [("w", "F32", [2, 3], f32(1, 2, 3, 4, 5, 6)), ("ids", "U8", [4], bytes([0, 1, 2, 255]))], {"epoch": "3"}))
write("safetensors", "every_dtype", safetensors([
    ("a", "F64", [1], f64(1.5)), ("b", "F16", [2], b"\x00\x3c\x00\xc0"), ("c", "BF16", [1], b"\x80\x3f"),
    ("d", "I64", [1], struct.pack("<q", -7)), ("e", "I32", [2], struct.pack("<2i", 1, -1)),
    ("f", "BOOL", [2], b"\x00\x01"), ("g", "F32", [], f32(2.0)), ("h", "F32", [0, 3], b"")]))
write("safetensors", "empty", safetensors([]))


def raw_safetensors(header, data=b""):
    """A file with the header as written, as another writer may lay it out."""
    return struct.pack("<Q", len(header)) + header + data


# The streaming header reader's paths: unknown fields of every JSON type (skipped), metadata,
# zero-byte tensors sharing an offset, the deepest shape allowed (64) and one past it, many tensors.
write("safetensors", "unknown_fields", raw_safetensors(
    b'{"a":{"x":{"y":[1,{"z":null}],"w":"s"},"dtype":"U8","v":[true,1.5,-3],"shape":[2],"data_offsets":[0,2]},'
    b'"__metadata__":{"format":"pt","k":"\\u00e9\\"q"}}', b"\x01\x00"))
write("safetensors", "zero_byte_tensors", raw_safetensors(
    b'{"z":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
    b'"y":{"dtype":"BOOL","shape":[0,3],"data_offsets":[1,1]}}', b"\x07"))
write("safetensors", "rank_64", safetensors([("r", "U8", [1] * 64, b"\x05")]))
write("safetensors", "rank_65", safetensors([("r", "U8", [1] * 65, b"\x05")]))
write("safetensors", "many_tensors", safetensors([("t%d" % i, "F32", [1], f32(i)) for i in range(200)]))

# ---------------------------------------------------------------- checkpoint (Linear(2, 2) + SGD momentum)
params = [("weight", [2, 2], f32(0.1, -0.2, 0.3, -0.4)), ("bias", [2], f32(0.5, -0.5))]
ckpt = [("model." + n, "F32", s, raw) for n, s, raw in params]
for opt, v in [("dampening", 0.0), ("lr", 0.1), ("maximize", 0.0), ("momentum", 0.9), ("nesterov", 0.0),
               ("weight_decay", 0.0), ("num_params", 2.0)]:
    ckpt.append(("optim.param_groups.0." + opt, "F64", [], f64(v)))
ckpt += [("optim.state.%d.momentum_buffer" % i, "F32", s, raw) for i, (_, s, raw) in enumerate(params)]
meta = {"format": "colony-checkpoint-1", "epoch": "2", "step": "40", "rng_seed": "0", "rng_offset": "128"}
write("checkpoint", "linear_sgd", safetensors(ckpt, meta))
write("checkpoint", "linear_sgd_fresh", safetensors(ckpt[:9], dict(meta, epoch="0", step="0")))


# ---------------------------------------------------------------- IDX: first byte = dims - 1, then the file
def idx(dims, data):
    return struct.pack(">I", 0x800 | len(dims)) + b"".join(struct.pack(">I", d) for d in dims) + data


labels = idx([10], bytes(range(10)))
images = idx([2, 4, 4], bytes(range(32)))
write("idx", "labels", bytes([0]) + labels)
write("idx", "images", bytes([2]) + images)
write("idx", "labels_gz", bytes([0]) + gzip.compress(labels, mtime=0))
write("idx", "images_gz", bytes([2]) + gzip.compress(images, mtime=0))

# ---------------------------------------------------------------- CIFAR-10: first byte odd = repeat to size
record = bytes([3]) + bytes((i * 7) & 255 for i in range(3072))
write("cifar10", "records_repeated", bytes([1]) + record + bytes([9]) + record[1:])
write("cifar10", "short_file", bytes([0]) + record * 2)


# ---------------------------------------------------------------- store: one connection's byte stream
def u32(v):
    return struct.pack("<I", v)


def s(b):
    return u32(len(b)) + b


def i64(v):
    return struct.pack("<q", v)


hello = b"CLNY" + u32(1) + s(b"fuzz")
SET, GET, ADD, CAS, WAIT, CHECK, DELETE = range(1, 8)
write("store", "set_get", hello + bytes([SET]) + s(b"k") + s(b"v1") + bytes([GET]) + s(b"k") + i64(1000))
write("store", "counters", hello + bytes([ADD]) + s(b"c") + i64(5) + bytes([ADD]) + s(b"c") + i64(-7) +
      bytes([SET]) + s(b"t") + s(b"x") + bytes([ADD]) + s(b"t") + i64(1))
write("store", "wait_check_delete", hello + bytes([SET]) + s(b"a") + s(b"1") + bytes([WAIT]) + u32(2) + s(b"a") +
      s(b"b") + i64(10) + bytes([CHECK]) + u32(1) + s(b"a") + bytes([DELETE]) + s(b"a") +
      bytes([CAS]) + s(b"n") + s(b"") + s(b"new"))
write("store", "wrong_token", b"CLNY" + u32(1) + s(b"other") + bytes([SET]) + s(b"k") + s(b"v"))
# Found by store_fuzz (signed overflow, undefined behaviour in the server): a counter at INT64_MAX
# plus 1, and a wait timeout of 2^62 ms turned into nanoseconds.
write("store", "add_overflow", hello + bytes([ADD]) + s(b"c") + i64(2**63 - 1) + bytes([ADD]) + s(b"c") + i64(1))
write("store", "wait_timeout_overflow", hello + bytes([GET]) + s(b"k") + i64(2**62))


# ---------------------------------------------------------------- torch_store: PyTorch's TCPStore requests
def u64(v):
    return struct.pack("<Q", v)


def ts(b):
    return u64(len(b)) + b


(VALIDATE, T_SET, T_CAS, T_GET, T_ADD, T_CHECK, T_WAIT, T_NUMKEYS, T_DELETE, T_APPEND, T_MULTI_GET, T_MULTI_SET,
 T_CANCEL, T_PING) = range(14)
torch_hello = bytes([VALIDATE]) + u32(0x3C85F7CE) + bytes([T_PING]) + u32(4242)
write("torch_store", "hello_set_get", torch_hello + bytes([T_SET]) + ts(b"/k") + ts(b"v1") +
      bytes([T_WAIT]) + u64(1) + ts(b"/k") + bytes([T_GET]) + ts(b"/k"))
write("torch_store", "counters", torch_hello + bytes([T_ADD]) + ts(b"/c") + struct.pack("<q", 5) +
      bytes([T_ADD]) + ts(b"/c") + struct.pack("<q", -7) + bytes([T_NUMKEYS]))
write("torch_store", "check_wait_cancel_delete", torch_hello + bytes([T_CHECK]) + u64(2) + ts(b"/a") + ts(b"/b") +
      bytes([T_WAIT]) + u64(2) + ts(b"/a") + ts(b"/b") + bytes([T_CANCEL]) + bytes([T_DELETE]) + ts(b"/a") +
      bytes([T_CAS]) + ts(b"/n") + ts(b"") + ts(b"new"))
# Refused: a query Colony never sends, and the magic in the wrong byte order.
write("torch_store", "append", torch_hello + bytes([T_APPEND]) + ts(b"/k") + ts(b"more"))
write("torch_store", "magic_big_endian", bytes([VALIDATE]) + struct.pack(">I", 0x3C85F7CE))
