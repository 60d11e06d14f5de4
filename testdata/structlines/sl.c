/*
 * sl.c - the testdata/structlines fixture: struct lines judged by who shares them
 * (diff::struct_lines, --access). Built twice by build.sh (old.elf as is, new.elf
 * with -DNEW). Every function takes a pointer, so the typed access map types its
 * accesses from the DWARF of its parameter. The writers are called by
 * scheduler_tick, the readers by tcp_v4_rcv (both known hot, built in): each is
 * frequent, and a writer and a reader are not one path on one CPU.
 *   struct sk: refcnt, written by sk_hold(), is on line 1 in OLD; NEW moves it to
 *     offset 8, on line 0 with key, which sk_lookup() reads: a new meeting (flag).
 *     seq is written by sk_hold() too: co-written with refcnt, never a meeting.
 *   struct dq: count, written by dq_inc(), shares line 0 with cfg, which dq_check()
 *     reads, in OLD; NEW moves count to a line of its own: the meeting ends (an
 *     improvement).
 * FACTS.md holds nm's, pahole's and objdump's view of both builds.
 */
#define noinline __attribute__((noinline))

struct sk {
	long key;
#ifdef NEW
	long refcnt;
	long seq;
	char pad[40];
#else
	char pad[56];
	long refcnt;
	long seq;
#endif
	long tail;
};

struct dq {
	long cfg;
#ifdef NEW
	char pad[56];
#endif
	long count;
};

struct sk the_sk;
struct dq the_dq;
long found;

noinline void sk_hold(struct sk *s)
{
	__atomic_fetch_add(&s->refcnt, 1, __ATOMIC_RELAXED);
	s->seq++;
}

noinline long sk_lookup(struct sk *s, long key)
{
	return s->key == key;
}

noinline void dq_inc(struct dq *d)
{
	__atomic_fetch_add(&d->count, 1, __ATOMIC_RELAXED);
}

noinline long dq_check(struct dq *d)
{
	return d->cfg;
}

noinline void scheduler_tick(void)
{
	sk_hold(&the_sk);
	dq_inc(&the_dq);
}

noinline void tcp_v4_rcv(void)
{
	found += sk_lookup(&the_sk, 42);
	found += dq_check(&the_dq);
}

void _start(void)
{
	scheduler_tick();
	tcp_v4_rcv();
}
