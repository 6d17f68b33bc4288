/* extract_risk.c: the risk verdict out of an LLM reply's text. Models wrap
 * JSON in fences and prose and get types wrong; the parser takes what it
 * can and says why when it cannot. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "extract.h"

#define MAX_OBJECT_STARTS 64 /* '{' positions tried: bounds the work on hostile text */

static int get_level(const cJSON *v, sq_risk_level *out) {
  if (cJSON_IsString(v)) return sq_risk_level_parse(v->valuestring, out);
  if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 4 &&
      v->valuedouble == floor(v->valuedouble)) {
    *out = (sq_risk_level)(int)v->valuedouble;
    return 0;
  }
  return -1;
}

static double get_confidence(const cJSON *v) {
  double d;
  if (cJSON_IsNumber(v)) d = v->valuedouble;
  else if (cJSON_IsString(v)) {
    char *end;
    d = strtod(v->valuestring, &end);
    if (end == v->valuestring) return -1;
    if (*end == '%') d /= 100;
  } else
    return -1;
  if (isnan(d)) return -1;
  if (d > 1 && d <= 100) d /= 100; /* a percentage */
  if (d < 0) d = 0;
  if (d > 1) d = 1;
  return d;
}

static void get_reason(const cJSON *v, char *dst, size_t len) {
  dst[0] = '\0';
  if (!v || cJSON_IsNull(v)) return;
  if (cJSON_IsString(v)) {
    snprintf(dst, len, "%s", v->valuestring);
  } else {
    char *s = cJSON_PrintUnformatted(v);
    if (s) snprintf(dst, len, "%s", s);
    free(s);
  }
  for (char *p = dst; *p; p++) /* one line in logs and results */
    if ((unsigned char)*p < 0x20) *p = ' ';
}

/* Fills out from obj when it holds a usable level or action. */
static int from_object(const cJSON *obj, sq_risk_verdict *out) {
  if (!cJSON_IsObject(obj)) return -1;
  const cJSON *lv = cJSON_GetObjectItem(obj, "level"), *av = cJSON_GetObjectItem(obj, "action");
  if (!lv) lv = cJSON_GetObjectItem(obj, "risk");
  sq_risk_level level;
  sq_risk_action action;
  bool has_level = get_level(lv, &level) == 0;
  bool has_action = cJSON_IsString(av) && sq_risk_action_parse(av->valuestring, &action) == 0;
  if (!has_level && !has_action) return -1;
  if (!has_action) action = level >= SQ_RISK_HIGH ? SQ_RISK_BLOCK : level == SQ_RISK_MEDIUM ? SQ_RISK_WARN : SQ_RISK_ALLOW;
  if (!has_level) level = action == SQ_RISK_BLOCK ? SQ_RISK_HIGH : action == SQ_RISK_WARN ? SQ_RISK_MEDIUM : SQ_RISK_NONE;
  out->level = level;
  out->action = action;
  out->confidence = get_confidence(cJSON_GetObjectItem(obj, "confidence"));
  get_reason(cJSON_GetObjectItem(obj, "reason"), out->reason, sizeof out->reason);
  return 0;
}

int sq_extract_risk(const char *content, sq_risk_verdict *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->confidence = -1;
  if (!content || !*content) {
    snprintf(err, errlen, "empty reply");
    return SQ_ELLM_REPLY;
  }
  /* Every '{' is a candidate start: the whole text, a fenced block and prose
   * around an object all reduce to this. cJSON stops at the object's end. */
  int tried = 0, objects = 0;
  for (const char *p = strchr(content, '{'); p && tried < MAX_OBJECT_STARTS; p = strchr(p + 1, '{'), tried++) {
    const char *end = NULL;
    cJSON *obj = cJSON_ParseWithOpts(p, &end, 0);
    if (!obj) continue;
    objects++;
    int ok = from_object(obj, out);
    cJSON_Delete(obj);
    if (ok == 0) return 0;
  }
  if (objects)
    snprintf(err, errlen, "risk reply: no object with a usable level or action");
  else
    snprintf(err, errlen, "risk reply: no JSON object found");
  return SQ_ELLM_REPLY;
}
