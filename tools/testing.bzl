"""One cc_test per tests/<folder>/*_test.cc file, so a failing suite is named by its file."""

def colony_test_suite(deps, size = "small", data = [], extra = {}):
    """extra: per-test overrides, e.g. {"loader_test": {"size": "medium"}}."""
    for src in native.glob(["*_test.cc"]):
        name = src[:-3]
        opts = extra.get(name, {})
        native.cc_test(
            name = name,
            srcs = [src],
            deps = deps + ["//tests:test_main"] + opts.get("deps", []),
            size = opts.get("size", size),
            data = data + opts.get("data", []),
            timeout = opts.get("timeout", None),
        )
