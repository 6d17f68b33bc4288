/* risk.c: the risk request, the cache form of a verdict, the fallback and
 * the block/warn/allow policy. The reply parser is extract_risk.c. */
#include "risk.h"

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "util.h"

const char *sq_risk_source_name(sq_risk_source s) {
  switch (s) {
  case SQ_RISK_FROM_MODEL: return "model";
  case SQ_RISK_FROM_FALLBACK: return "fallback";
  case SQ_RISK_FROM_CACHE: return "cache";
  }
  return "?";
}

const char *sq_risk_system_prompt(void) {
  return "You are a security reviewer for untrusted Python programs that will run in a sandbox. "
         "Assess what the program would do if run: reading secrets, network access, process "
         "spawning, file system damage, resource abuse, sandbox escape attempts. Reply with only "
         "a JSON object: {\"level\": \"critical|high|medium|low|none\", \"reason\": \"<one "
         "sentence>\", \"action\": \"block|warn|allow\", \"confidence\": <0..1>}.";
}

char *sq_risk_user_prompt(const char *code) {
  sq_buf b = {0};
  if (sq_buf_appendf(&b, "Program to review:\n```python\n%s\n```\n", code) != 0) {
    sq_buf_clear(&b);
    return NULL;
  }
  return b.data;
}

void sq_risk_code_sha256(const char *code, size_t len, char hex[65]) {
  unsigned char md[32];
  unsigned int n = 0;
  if (!EVP_Digest(code, len, md, &n, EVP_sha256(), NULL) || n != 32) memset(md, 0, sizeof md);
  for (int i = 0; i < 32; i++)
    snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

sq_risk_action sq_risk_decide(const sq_risk_verdict *v, sq_risk_source src, const sq_risk_policy *p) {
  if (src == SQ_RISK_FROM_FALLBACK) return p->fallback;
  if (v->action == SQ_RISK_BLOCK || v->level >= p->block_level) return SQ_RISK_BLOCK;
  if (v->action == SQ_RISK_WARN || v->level >= SQ_RISK_MEDIUM) return SQ_RISK_WARN;
  return SQ_RISK_ALLOW;
}

void sq_risk_fallback(sq_risk_result *r, const char *why, const sq_risk_policy *p) {
  memset(r, 0, sizeof *r);
  r->v.level = SQ_RISK_NONE;
  r->v.action = p->fallback;
  r->v.confidence = -1;
  snprintf(r->v.reason, sizeof r->v.reason, "no verdict (%s); fallback %s", why, sq_risk_action_name(p->fallback));
  r->source = SQ_RISK_FROM_FALLBACK;
  r->decision = sq_risk_decide(&r->v, r->source, p);
}

char *sq_risk_to_json(const sq_risk_verdict *v) {
  cJSON *o = cJSON_CreateObject();
  char *s = NULL;
  if (o && cJSON_AddStringToObject(o, "level", sq_risk_level_name(v->level)) &&
      cJSON_AddStringToObject(o, "action", sq_risk_action_name(v->action)) &&
      cJSON_AddNumberToObject(o, "confidence", v->confidence) && cJSON_AddStringToObject(o, "reason", v->reason))
    s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

int sq_risk_from_json(const char *json, size_t len, sq_risk_verdict *v) {
  memset(v, 0, sizeof *v);
  cJSON *o = cJSON_ParseWithLength(json, len);
  const cJSON *lv = cJSON_GetObjectItemCaseSensitive(o, "level"), *av = cJSON_GetObjectItemCaseSensitive(o, "action"),
              *cv = cJSON_GetObjectItemCaseSensitive(o, "confidence"), *rv = cJSON_GetObjectItemCaseSensitive(o, "reason");
  int rc = SQ_EPARSE;
  if (cJSON_IsString(lv) && cJSON_IsString(av) && cJSON_IsNumber(cv) && cJSON_IsString(rv) &&
      sq_risk_level_parse(lv->valuestring, &v->level) == 0 && sq_risk_action_parse(av->valuestring, &v->action) == 0) {
    v->confidence = cv->valuedouble;
    snprintf(v->reason, sizeof v->reason, "%s", rv->valuestring);
    rc = 0;
  }
  cJSON_Delete(o);
  return rc;
}
