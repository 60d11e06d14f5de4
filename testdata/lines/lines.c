/*
 * lines.c - the testdata/lines fixture: false sharing judged on the line, member
 * by member, with the writers read from the machine code. Built twice by build.sh
 * (old.elf as is, new.elf with -DNEW); hot.txt and hot-writer.txt are the --hot lists the
 * tests pass (hot-writer.txt makes other_update, the writer of other_stat, hot).
 *   A: fork_counter (hot, `lock add` in fork_account) alone on its line in OLD;
 *      in NEW other_stat, which other_update() stores to, lands on that line.
 *   B: big_obj (hot; its refs taken atomically by big_get) has refs on a line of
 *      its own; in NEW tail_stat, written by tail_update(), joins the line of its
 *      cold tail, which is not refs' line nor in refs' 128-byte pair.
 *   C: per-CPU pcp_events, incremented with `incq %gs:` (this_cpu_inc) by
 *      tick_account, alone on its line in OLD; in NEW pcp_other, incremented by
 *      other_cpu_update(), shares it.
 * FACTS.md holds nm's, pahole's and objdump's view of both.
 */
typedef struct { int counter; } atomic_t;

#define __aligned(n) __attribute__((aligned(n)))
#define __percpu __attribute__((section(".data..percpu")))
#define this_cpu_inc(v) asm volatile("incq %%gs:%0" : "+m"(v))

/* A: a hot counter and, in NEW, a written neighbour on its line. */
int fork_counter __aligned(128) = 1;
#ifdef NEW
long other_stat = 2;
#endif
char pad_a[64] __aligned(64) = { 1 };

/* B: refs alone on its line; the cold tail's line gains a neighbour in NEW. */
struct big {
	atomic_t refs;
	char name[60];
	char cold_tail[32];
};
char pad_b[64] __aligned(128) = { 1 };
struct big big_obj = { { 1 }, "big", "tail" };
#ifdef NEW
long tail_stat = 3;
#endif
char pad_b2[64] __aligned(128) = { 1 };

/* C: per-CPU counters written with this_cpu_inc. */
unsigned long pcp_events __percpu = 1;
#ifdef NEW
unsigned long pcp_other __percpu = 1;
#endif
char pcp_pad[64] __percpu __aligned(64) = { 1 };

void fork_account(void)
{
	__atomic_fetch_add(&fork_counter, 1, __ATOMIC_RELAXED);
}

void big_get(void)
{
	__atomic_fetch_add(&big_obj.refs.counter, 1, __ATOMIC_RELAXED);
}

void tick_account(void)
{
	this_cpu_inc(pcp_events);
}

#ifdef NEW
void other_update(long v)
{
	other_stat = v;
}

void tail_update(long v)
{
	tail_stat = v;
}

void other_cpu_update(void)
{
	this_cpu_inc(pcp_other);
}
#endif

void _start(void)
{
	fork_account();
	big_get();
	tick_account();
#ifdef NEW
	other_update(pad_a[0]);
	tail_update(pad_b[0] + pad_b2[0] + pcp_pad[0]);
	other_cpu_update();
#endif
}
