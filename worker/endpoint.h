/* endpoint.h: GET /metrics (this worker's series) and GET /healthz
 * (endpoint.c), served from their own thread out of what the event loop
 * publishes. */
#ifndef SQ_WORKER_ENDPOINT_H
#define SQ_WORKER_ENDPOINT_H

typedef struct worker worker;

/* Starts serving on cfg.metrics_listen (nothing when empty). Returns 0, or
 * SQ_EINVAL/SQ_EEXISTS/SQ_ESYS after logging why. */
int sq__endpoint_start(worker *w);
/* From the event loop: what the endpoint answers (claiming or not and why;
 * the metrics text when due). Cheap; call often. */
void sq__endpoint_publish(worker *w);
void sq__endpoint_stop(worker *w);

#endif
