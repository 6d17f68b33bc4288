# tests of the core modules: task, result, verdict, config.
sq_unit_test(test_task)
sq_unit_test(test_verdict)
sq_unit_test(test_config)
sq_unit_test(test_result)
sq_script_test(result_bson integration/result_bson.sh)
sq_script_test(pipeline integration/pipeline.sh TIMEOUT 300)
sq_script_test(compose integration/compose.sh)
sq_script_test(humaneval integration/humaneval.sh TIMEOUT 900)
