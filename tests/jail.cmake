# tests of the jail module(s)
sq_unit_test(test_jail)
set_tests_properties(test_jail PROPERTIES TIMEOUT 120)
sq_script_test(jail_run integration/jail_run.sh TIMEOUT 120)
