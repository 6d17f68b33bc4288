# tests of the static pre-check (tokenizer, policy) and the abuse suite.
sq_unit_test(test_pytok)
sq_unit_test(test_policy)
sq_unit_test(test_policy_humaneval)

# libFuzzer target for the tokenizer and checker: built with clang only
# (cmake -DCMAKE_C_COMPILER=clang); run build/bin/fuzz_pytok by hand.
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  add_executable(fuzz_pytok fuzz/fuzz_pytok.c)
  target_link_libraries(fuzz_pytok PRIVATE sandq sq_warnings)
  target_compile_options(fuzz_pytok PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(fuzz_pytok PRIVATE -fsanitize=fuzzer,address,undefined)
endif()
