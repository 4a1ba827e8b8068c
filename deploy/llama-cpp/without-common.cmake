# Included by CMake right after llama.cpp's project() call when llama-cpp-python is compiled
# (see LLAMA_CMAKE_ARGS in the Makefile). llama-cpp-python forces llama.cpp's `common`
# library on for its multimodal (mtmd) library, which the embedded judge never loads; the
# Python bindings and their server use libllama and ggml alone. Without `common` (and the
# HTTP library only it uses) the compile needs about half the CPU time.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama: build common utils library" FORCE)
