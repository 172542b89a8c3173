"""Offline shim: forwards rules_java's names to Bazel 4's native Java rules."""
java_binary = native.java_binary
java_library = native.java_library
java_import = native.java_import
java_test = native.java_test
java_toolchain = native.java_toolchain
java_runtime = native.java_runtime
java_proto_library = native.java_proto_library
java_plugin = native.java_plugin
