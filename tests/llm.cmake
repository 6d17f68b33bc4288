# tests of the llm module(s): the reply extractor (unit) and the LLM client
# against the project's fake LLM over real loopback HTTP (integration).
sq_unit_test(test_reply)

# test_llm needs a running fake LLM: it is registered only through its script.
add_executable(test_llm unit/test_llm.c unit/check.c)
target_link_libraries(test_llm PRIVATE sandq sq_warnings)
target_include_directories(test_llm PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
sq_script_test(llm_client integration/llm_client.sh)
sq_unit_test(test_llm_policy)
sq_script_test(worker_llm integration/worker_llm.sh TIMEOUT 300)
sq_script_test(fuzz_reply fuzz/run.sh TIMEOUT 120)
