/* openref: a plain C open loop, the reference the open loop's known answer
 * is judged beside (bench/reference_test.go). One thread serves arrivals at
 * rate per second (Poisson or fixed), each with a busy wait of cost ns, and
 * waits for an arrival as the harness does (verbs/batch.c: timer slack 1 ns;
 * spin, a busy wait; or sleep, a sleep to 50 us before it when it is
 * further, then a spin), so what it gets beyond the queue's answer is the
 * machine's: late wake-ups and a CPU taken away, which no harness on this
 * machine avoids.
 *
 *   openref RATE COST_NS WARMUP_S DURATION_S poisson|fixed SEED spin|sleep
 *
 * prints one line: ops=N service_mean_ns=X service_p50_ns=S response_mean_ns=Y
 * response_p50_ns=Z late_max_ns=W (operations due in the warmup are left
 * out, as the harness leaves them out).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define SPIN_NS 50000u /* XB_SPIN_NS */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 88172645463325252u;

/* uniform01 is in (0, 1): xorshift64, 53 bits. */
static double uniform01(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 8 || (strcmp(argv[5], "poisson") && strcmp(argv[5], "fixed")) ||
	    (strcmp(argv[7], "spin") && strcmp(argv[7], "sleep"))) {
		fprintf(stderr, "usage: openref RATE COST_NS WARMUP_S DURATION_S poisson|fixed SEED spin|sleep\n");
		return 2;
	}
	int spin = !strcmp(argv[7], "spin");
	double rate = atof(argv[1]), warmup = atof(argv[3]), duration = atof(argv[4]);
	uint64_t cost = strtoull(argv[2], NULL, 10);
	int poisson = !strcmp(argv[5], "poisson");
	rng ^= strtoull(argv[6], NULL, 10) * 0x9e3779b97f4a7c15u;
	if (rate <= 0 || duration <= 0 || warmup < 0 || cost == 0) {
		fprintf(stderr, "openref: RATE, COST_NS and DURATION_S must be positive\n");
		return 2;
	}
	size_t cap = (size_t)(rate * (duration + 1)) + 16, n = 0;
	uint64_t *resp = malloc(cap * sizeof(*resp)), *svc = malloc(cap * sizeof(*svc));
	if (!resp || !svc) {
		perror("openref");
		return 1;
	}
	prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);

	uint64_t begin = now_ns() + 1000000, measure = begin + (uint64_t)(warmup * 1e9);
	uint64_t end = measure + (uint64_t)(duration * 1e9), due = begin;
	uint64_t late_max = 0;
	double sum_service = 0, sum_response = 0;
	for (;;) {
		due += poisson ? (uint64_t)(-log(uniform01()) * 1e9 / rate) : (uint64_t)(1e9 / rate);
		if (due >= end || n == cap)
			break;
		uint64_t t = now_ns();
		if (due > t) {
			if (!spin && due - t > SPIN_NS) {
				uint64_t wake = due - SPIN_NS;
				struct timespec ts = { .tv_sec = (time_t)(wake / 1000000000u),
						       .tv_nsec = (long)(wake % 1000000000u) };
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			}
			while ((t = now_ns()) < due)
				;
			if (t - due > late_max && due >= measure)
				late_max = t - due;
		}
		uint64_t e;
		do
			e = now_ns();
		while (e < t + cost);
		if (due < measure)
			continue;
		sum_service += (double)(e - t);
		sum_response += (double)(e - due);
		svc[n] = e - t;
		resp[n++] = e - due;
	}
	if (n == 0) {
		fprintf(stderr, "openref: no operation measured\n");
		return 1;
	}
	qsort(resp, n, sizeof(*resp), cmp_u64);
	qsort(svc, n, sizeof(*svc), cmp_u64);
	printf("ops=%zu service_mean_ns=%.1f service_p50_ns=%llu response_mean_ns=%.1f response_p50_ns=%llu late_max_ns=%llu\n",
	       n, sum_service / (double)n, (unsigned long long)svc[(n - 1) / 2], sum_response / (double)n,
	       (unsigned long long)resp[(n - 1) / 2], (unsigned long long)late_max);
	return 0;
}
