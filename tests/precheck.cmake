# tests of the static pre-check (tokenizer, policy) and the abuse suite.
sq_unit_test(test_pytok)
sq_unit_test(test_policy)
sq_unit_test(test_policy_humaneval)

# libFuzzer target for the tokenizer and checker: built with clang only
# (cmake -DCMAKE_C_COMPILER=clang); run build/bin/fuzz_pytok by hand.
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  # the checked sources are compiled in, so the fuzzer sees their coverage
  add_executable(fuzz_pytok fuzz/fuzz_pytok.c ${CMAKE_SOURCE_DIR}/common/pytok.c
    ${CMAKE_SOURCE_DIR}/common/policy.c ${CMAKE_SOURCE_DIR}/common/errors.c)
  target_include_directories(fuzz_pytok PRIVATE ${CMAKE_SOURCE_DIR}/common)
  target_link_libraries(fuzz_pytok PRIVATE sq_warnings)
  target_compile_options(fuzz_pytok PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(fuzz_pytok PRIVATE -fsanitize=fuzzer,address,undefined)
endif()

# The abuse suite: tests/abuse/*.py through `sandq-worker run` and a real worker.
sq_script_test(abuse integration/abuse.sh TIMEOUT 900)
