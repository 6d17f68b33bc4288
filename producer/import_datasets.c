/* import_datasets.c: the datasets `import` reads, as one declared table:
 * each one's name, id field, reader, modes and flags (import_internal.h).
 * A dataset is one entry here and its reader's file. */
#include <stddef.h>
#include <string.h>

#include "import_internal.h"

#define ALL_MODES ((1u << MODE_SAMPLES) | (1u << MODE_CANONICAL) | (1u << MODE_COMPLETIONS))

/* humaneval+ and mbpp+: evalplus's rows, one reader; no {tests} in a
 * prompt (their tests hold the reference solution). */
#define PLUS(NAME, TITLE)                                                                                    \
  {                                                                                                          \
    .name = NAME, .title = TITLE, .id_field = "task_id", .read = sq__import_plus_problem,                    \
    .modes = ALL_MODES, .flags = SQ__DS_CONTINUES | SQ__DS_TPL_ENTRY,                                        \
    .fields = {{"id", "task_id"},    {"tests", "base_input"},        {"plus_tests", "plus_input"},           \
               {"prompt", "prompt"}, {"code", "canonical_solution"}, {NULL, NULL}},                          \
  }

static const sq__import_dataset table[SQ__DS__COUNT] = {
    [SQ__DS_HUMANEVAL] = {.name = "humaneval",
                          .title = "HumanEval",
                          .id_field = "task_id",
                          .read = sq__import_humaneval_problem,
                          .modes = ALL_MODES,
                          .flags = SQ__DS_CONTINUES | SQ__DS_TPL_TESTS | SQ__DS_TPL_ENTRY,
                          .fields = {{"id", "task_id"},
                                     {"tests", "test"},
                                     {"prompt", "prompt"},
                                     {"code", "canonical_solution"},
                                     {NULL, NULL}}},
    [SQ__DS_MBPP] = {.name = "mbpp",
                     .title = "MBPP",
                     .id_field = "task_id",
                     .id_prefix = "Mbpp/",
                     .read = sq__import_mbpp_problem,
                     .modes = ALL_MODES,
                     .flags = SQ__DS_TPL_TESTS,
                     .splits = sq__import_mbpp_splits,
                     .fields = {{"id", "task_id"},
                                {"tests", "test_list"},
                                {"prompt", "text"},
                                {"code", "code"},
                                {NULL, NULL}}},
    [SQ__DS_APPS] = {.name = "apps",
                     .title = "APPS",
                     .id_field = "problem_id",
                     .id_prefix = "APPS/",
                     .read = sq__import_apps_problem,
                     .modes = ALL_MODES,
                     .template_refused = "an apps prompt is built from its question and its input format",
                     .flags = SQ__DS_MAX_CASES,
                     .fields = {{"id", "problem_id"},
                                {"tests", "input_output"},
                                {"cases", "input_output"},
                                {"task", "input_output"},
                                {"prompt", "question"},
                                {"code", "solutions"},
                                {NULL, NULL}}},
    [SQ__DS_HUMANEVAL_PLUS] = PLUS("humaneval+", "HumanEval+"),
    [SQ__DS_MBPP_PLUS] = PLUS("mbpp+", "MBPP+"),
    [SQ__DS_MULTIPLE] = {.name = "multipl-e",
                         .title = "MultiPL-E",
                         .id_field = "(name, language)",
                         .read_id = sq__import_multiple_id,
                         .read = sq__import_multiple_problem,
                         .modes = 1u << MODE_COMPLETIONS,
                         .modes_why = "it has no reference solutions, and its programs continue the prompt, "
                                      "which a generated whole program does not",
                         .flags = SQ__DS_CONTINUES,
                         .cut = sq__import_multiple_cut,
                         .fields = {{"id", "name"}, {NULL, NULL}}},
};

const sq__import_dataset *sq__import_dataset_find(const char *name) {
  for (size_t i = 0; i < SQ__DS__COUNT; i++)
    if (strcmp(name, table[i].name) == 0) return &table[i];
  return NULL;
}

const sq__import_dataset *sq__import_dataset_get(sq__import_dataset_id id) { return &table[id]; }
