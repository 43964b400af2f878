/* openref: a plain C open loop, the reference the open loop's known answer
 * is judged beside (bench/reference_test.go). Each of THREADS threads is a
 * queue of its own: it serves arrivals at RATE per second (Poisson or
 * fixed, its own sequence), each with a busy wait of COST_NS, and waits for
 * an arrival as the harness does (verbs/batch.c: timer slack 1 ns; spin, a
 * busy wait; or sleep, a sleep to 50 us before it when it is further, then
 * a spin), so what it gets beyond the queue's answer is the machine's: late
 * wake-ups and a CPU taken away, which no harness on this machine avoids.
 * The threads start together, a few milliseconds after the program.
 *
 *   openref RATE COST_NS WARMUP_S DURATION_S poisson|fixed SEED spin|sleep THREADS
 *
 * prints one line over all threads' operations: ops=N service_mean_ns=X
 * service_p50_ns=S response_mean_ns=Y response_p50_ns=Z
 * response_p99_ns=P response_max_ns=M late_max_ns=W (operations due in the warmup are left
 * out, as the harness leaves them out).
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define SPIN_NS 50000u /* XB_SPIN_NS */
#define MAX_THREADS 1024

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* uniform01 is in (0, 1): xorshift64, 53 bits. */
static double uniform01(uint64_t *rng)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	return ((double)(*rng >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What every thread shares, set before any starts. */
static struct {
	double rate;
	uint64_t cost, begin, measure, end;
	int poisson, spin;
	size_t cap; /* operations a thread may record */
} run;

/* One thread's queue and what it measured. */
struct queue {
	pthread_t thread;
	uint64_t rng;
	uint64_t *resp, *svc;
	size_t n;
	uint64_t late_max;
	double sum_service, sum_response;
};

static void *serve(void *arg)
{
	struct queue *q = arg;
	uint64_t due = run.begin;

	prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
	for (;;) {
		due += run.poisson ? (uint64_t)(-log(uniform01(&q->rng)) * 1e9 / run.rate) : (uint64_t)(1e9 / run.rate);
		if (due >= run.end || q->n == run.cap)
			break;
		uint64_t t = now_ns();
		if (due > t) {
			if (!run.spin && due - t > SPIN_NS) {
				uint64_t wake = due - SPIN_NS;
				struct timespec ts = { .tv_sec = (time_t)(wake / 1000000000u),
						       .tv_nsec = (long)(wake % 1000000000u) };
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			}
			while ((t = now_ns()) < due)
				;
			if (t - due > q->late_max && due >= run.measure)
				q->late_max = t - due;
		}
		uint64_t e;
		do
			e = now_ns();
		while (e < t + run.cost);
		if (due < run.measure)
			continue;
		q->sum_service += (double)(e - t);
		q->sum_response += (double)(e - due);
		q->svc[q->n] = e - t;
		q->resp[q->n++] = e - due;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 9 || (strcmp(argv[5], "poisson") && strcmp(argv[5], "fixed")) ||
	    (strcmp(argv[7], "spin") && strcmp(argv[7], "sleep"))) {
		fprintf(stderr, "usage: openref RATE COST_NS WARMUP_S DURATION_S poisson|fixed SEED spin|sleep THREADS\n");
		return 2;
	}
	double warmup = atof(argv[3]), duration = atof(argv[4]);
	int threads = atoi(argv[8]);
	run.rate = atof(argv[1]);
	run.cost = strtoull(argv[2], NULL, 10);
	run.poisson = !strcmp(argv[5], "poisson");
	run.spin = !strcmp(argv[7], "spin");
	if (run.rate <= 0 || duration <= 0 || warmup < 0 || run.cost == 0 || threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "openref: RATE, COST_NS and DURATION_S must be positive, THREADS 1 to %d\n", MAX_THREADS);
		return 2;
	}
	uint64_t seed = strtoull(argv[6], NULL, 10);
	run.cap = (size_t)(run.rate * (duration + 1)) + 16;
	static struct queue qs[MAX_THREADS];
	for (int i = 0; i < threads; i++) {
		qs[i].rng = 88172645463325252u ^ (seed + (uint64_t)i * 7919u) * 0x9e3779b97f4a7c15u;
		qs[i].resp = malloc(run.cap * sizeof(uint64_t));
		qs[i].svc = malloc(run.cap * sizeof(uint64_t));
		if (!qs[i].resp || !qs[i].svc) {
			perror("openref");
			return 1;
		}
	}
	run.begin = now_ns() + 5000000;
	run.measure = run.begin + (uint64_t)(warmup * 1e9);
	run.end = run.measure + (uint64_t)(duration * 1e9);
	for (int i = 0; i < threads; i++) {
		int err = pthread_create(&qs[i].thread, NULL, serve, &qs[i]);
		if (err) {
			fprintf(stderr, "openref: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	size_t n = 0;
	uint64_t late_max = 0;
	double sum_service = 0, sum_response = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(qs[i].thread, NULL);
		n += qs[i].n;
		sum_service += qs[i].sum_service;
		sum_response += qs[i].sum_response;
		if (qs[i].late_max > late_max)
			late_max = qs[i].late_max;
	}
	if (n == 0) {
		fprintf(stderr, "openref: no operation measured\n");
		return 1;
	}
	uint64_t *resp = malloc(n * sizeof(*resp)), *svc = malloc(n * sizeof(*svc));
	if (!resp || !svc) {
		perror("openref");
		return 1;
	}
	for (size_t i = 0, at = 0; i < (size_t)threads; at += qs[i].n, i++) {
		memcpy(resp + at, qs[i].resp, qs[i].n * sizeof(*resp));
		memcpy(svc + at, qs[i].svc, qs[i].n * sizeof(*svc));
	}
	qsort(resp, n, sizeof(*resp), cmp_u64);
	qsort(svc, n, sizeof(*svc), cmp_u64);
	printf("ops=%zu service_mean_ns=%.1f service_p50_ns=%llu response_mean_ns=%.1f response_p50_ns=%llu response_p99_ns=%llu response_max_ns=%llu late_max_ns=%llu\n",
	       n, sum_service / (double)n, (unsigned long long)svc[(n - 1) / 2], sum_response / (double)n,
	       (unsigned long long)resp[(n - 1) / 2], (unsigned long long)resp[(n * 99 - 1) / 100],
	       (unsigned long long)resp[n - 1], (unsigned long long)late_max);
	return 0;
}
