/* import_plus.c: humaneval+'s and mbpp+'s rows (evalplus's) into problems
 * with two tiers of tests (base and plus) that compare the candidate with
 * the reference solution on each input, in the judge (docs/evaluation.md). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"

/* evalplus's comparison of a candidate's output with the reference's
 * (its evaluator: equal, or for a float or a list of floats within atol,
 * 1e-6 when the row's atol is 0, and a relative 1e-7), run by the judge.
 * Each input's call gets max(floor, factor x the reference's time on that
 * input) of CPU time, evalplus's min_time_limit (1 s) and
 * gt_time_limit_factor (4): the reference's time is the judge's CPU time
 * (time.process_time), the candidate's its process's CPU clock (judge.py's
 * __sandq_cpu_limit__), neither of which grows with the host's load.
 * The first line marks the tests for the worker's cache of expected values
 * (worker/expected.h): it runs the reference once per problem, alone,
 * printing _sq_dump(), and gives later runs the values as _SQ_EXPECTED, in
 * a tagged encoding of plain values only (decoded here, in the judge). */
static const char tier_tests[] =
    "# sandq:expected v1\n"
    "import copy, json, time\n"
    "_SQ_FLOOR_S, _SQ_FACTOR = 1.0, 4.0\n"
    "def _sq_reference():\n"
    "    ns = {'__name__': '_sq_reference'}\n"
    "    exec(%s, ns)\n"
    "    return ns[%s]\n"
    "def _sq_same(got, want, atol):\n"
    "    if type(got) is type(want) and got == want:\n"
    "        return True\n"
    "    seq = isinstance(want, (list, tuple))\n"
    "    ws = list(want) if seq else [want]\n"
    "    if not ws or not all(type(w) is float for w in ws):\n"
    "        return False\n"
    "    gs = list(got) if seq and isinstance(got, (list, tuple)) else [got] if not seq else None\n"
    "    tol = atol or 1e-6\n"
    "    return gs is not None and len(gs) == len(ws) and all(\n"
    "        type(g) in (int, float) and abs(g - w) <= tol + 1e-7 * abs(w) for g, w in zip(gs, ws))\n"
    "_sq_inputs = json.loads(%s)\n"
    "_SQ_SEQ = {'list': list, 'tuple': tuple, 'set': set, 'frozenset': frozenset}\n"
    "def _sq_enc(v):\n"
    "    t = type(v)\n"
    "    if v is None:\n"
    "        return ['None']\n"
    "    if t in (bool, str):\n"
    "        return [t.__name__, v]\n"
    "    if t is int:\n"
    "        return ['int', hex(v)]\n"
    "    if t is float:\n"
    "        return ['float', v.hex()]\n"
    "    if t is complex:\n"
    "        return ['complex', v.real.hex(), v.imag.hex()]\n"
    "    if t is bytes:\n"
    "        return ['bytes', v.hex()]\n"
    "    if _SQ_SEQ.get(t.__name__) is t:\n"
    "        return [t.__name__, [_sq_enc(x) for x in v]]\n"
    "    if t is dict:\n"
    "        return ['dict', [[_sq_enc(k), _sq_enc(x)] for k, x in v.items()]]\n"
    "    raise TypeError('not a plain value: %%s' %% t.__name__)\n"
    "def _sq_dec(e):\n"
    "    k = e[0]\n"
    "    if k == 'None':\n"
    "        return None\n"
    "    if k in ('bool', 'str') and type(e[1]).__name__ == k:\n"
    "        return e[1]\n"
    "    if k == 'int':\n"
    "        return int(e[1], 16)\n"
    "    if k == 'float':\n"
    "        return float.fromhex(e[1])\n"
    "    if k == 'complex':\n"
    "        return complex(float.fromhex(e[1]), float.fromhex(e[2]))\n"
    "    if k == 'bytes':\n"
    "        return bytes.fromhex(e[1])\n"
    "    if k in _SQ_SEQ:\n"
    "        return _SQ_SEQ[k](_sq_dec(x) for x in e[1])\n"
    "    if k == 'dict':\n"
    "        return {_sq_dec(a): _sq_dec(b) for a, b in e[1]}\n"
    "    raise ValueError(k)\n"
    "def _sq_compute():\n"
    "    ref, out = _sq_reference(), []\n"
    "    for args in _sq_inputs:\n"
    "        t0 = time.process_time()\n"
    "        want = ref(*copy.deepcopy(args))\n"
    "        out.append((want, time.process_time() - t0))\n"
    "    return out\n"
    "def _sq_dump():\n"
    "    return json.dumps([[_sq_enc(w), t] for w, t in _sq_compute()])\n"
    "def _sq_expected():\n"
    "    given = globals().get('_SQ_EXPECTED')\n"
    "    if given is not None:\n"
    "        try:\n"
    "            out = [(_sq_dec(e), float(t)) for e, t in json.loads(given)]\n"
    "            if len(out) == len(_sq_inputs):\n"
    "                return out\n"
    "        except Exception:\n"
    "            pass\n"
    "    return _sq_compute()\n"
    "def check(candidate):\n"
    "    limit = globals().get('__sandq_cpu_limit__')\n"
    "    for i, (args, (want, ref_s)) in enumerate(zip(_sq_inputs, _sq_expected())):\n"
    "        where = '%s input %%d of %%d' %% (i + 1, len(_sq_inputs))\n"
    "        if limit:\n"
    "            limit(max(_SQ_FLOOR_S, _SQ_FACTOR * ref_s), where)\n"
    "        got = candidate(*copy.deepcopy(args))\n"
    "        assert _sq_same(got, want, %.17g), where\n";

/* A C string as a Python str literal (cJSON's JSON string syntax is one). */
static char *py_literal(const char *text) {
  cJSON *s = cJSON_CreateString(text);
  char *lit = s ? cJSON_PrintUnformatted(s) : NULL;
  cJSON_Delete(s);
  return lit;
}

/* The tests of one evalplus tier: the reference (prompt and canonical
 * solution) run in the judge on each input, the candidate on the same. */
static char *make_tier(const char *tier, const char *reference, const char *entry, const cJSON *inputs,
                       double atol) {
  char *json = cJSON_PrintUnformatted(inputs);
  char *ref = py_literal(reference), *ep = py_literal(entry), *in = json ? py_literal(json) : NULL;
  sq_buf b = {0};
  char *out = NULL;
  if (ref && ep && in && sq_buf_appendf(&b, tier_tests, ref, ep, in, tier, atol) == 0)
    out = b.data;
  else
    sq_buf_clear(&b);
  free(json), free(ref), free(ep), free(in);
  return out;
}

/* One HumanEval+ or MBPP+ row: the base tier's tests run the candidate and
 * the reference on base_input, the plus tier's on plus_input. A
 * --prompt-template gets HumanEval's fields but {tests} (refused: they
 * hold the reference). */
int sq__import_plus_problem(const cJSON *o, sq__import_problem *p, const sq__import_opts *opts,
                            const char *path, size_t lineno) {
  const char *prompt = sq__import_need_string(o, "prompt", path, lineno),
             *sol = sq__import_need_string(o, "canonical_solution", path, lineno),
             *ep = sq__import_need_string(o, "entry_point", path, lineno);
  if (!prompt || !sol || !ep) return -1;
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(o, "base_input"),
              *plus = cJSON_GetObjectItemCaseSensitive(o, "plus_input"),
              *atol = cJSON_GetObjectItemCaseSensitive(o, "atol");
  const char *bad = !cJSON_IsArray(base) || cJSON_GetArraySize(base) == 0       ? "base_input"
                    : !cJSON_IsArray(plus)                                      ? "plus_input"
                    : atol && !(cJSON_IsNumber(atol) && atol->valuedouble >= 0) ? "atol"
                                                                                : NULL;
  const cJSON *item;
  cJSON_ArrayForEach(item, base) if (!bad && !cJSON_IsArray(item)) bad = "base_input";
  cJSON_ArrayForEach(item, plus) if (!bad && !cJSON_IsArray(item)) bad = "plus_input";
  if (bad) {
    fprintf(stderr, "%s:%zu: %s: %s\n", path, lineno, bad,
            strcmp(bad, "atol") == 0 ? "must be a number >= 0"
                                     : "must be a list of argument lists (base_input: not empty)");
    return -1;
  }
  char *reference = sq__import_cat3(prompt, sol, "");
  double tol = atol ? atol->valuedouble : 0;
  p->prefix = strdup(prompt);
  p->canonical = strdup(sol);
  p->entry_point = strdup(ep);
  p->tests = reference ? make_tier("base", reference, ep, base, tol) : NULL;
  p->plus_tests = reference ? make_tier("plus", reference, ep, plus, tol) : NULL;
  p->gen_prompt = sq__import_humaneval_prompt(opts, prompt, NULL, ep, p->id);
  free(reference);
  return p->prefix && p->canonical && p->entry_point && p->tests && p->plus_tests && p->gen_prompt ? 0 : -1;
}
