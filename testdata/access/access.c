/*
 * access.c - the fixture of the access map (src/access): globals read,
 * written, incremented without a lock prefix, updated atomically, an array
 * indexed, lock addresses passed to a helper that writes through its
 * argument and a struct's address passed to one that only reads, and
 * per-CPU variables reached through %gs (RIP-relative, as 6.1's
 * this_cpu_inc, and as an absolute offset).  Built by build.sh; the expected
 * references are objdump's, in FACTS.md.
 */

typedef struct {
	volatile int locked;
} spinlock_t;

struct stats {
	long hits;
	long misses;
};

#define __percpu_var __attribute__((section(".data..percpu")))

long nr_things;		/* read_things reads, set_things writes */
long counter;		/* bump_counter: addq $1 (no lock) */
long atomic_count;	/* atomic_inc: lock add */
long flag;		/* swap_flag: xchg */
long table[16];		/* table_get: indexed, absolute disp32 */
spinlock_t big_lock;	/* its address passed to spin_lock (writes) */
spinlock_t rip_lock;	/* its address taken by lea X(%rip) */
struct stats stats;	/* its address passed to show_stats (reads) */
long pcpu_hits __percpu_var;	/* incq %gs:pcpu_hits(%rip) */
int pcpu_seg __percpu_var;	/* read as %gs:abs (an absolute offset) */

__attribute__((noinline)) void spin_lock(spinlock_t *l)
{
	int old = 0;

	while (!__atomic_compare_exchange_n(&l->locked, &old, 1, 0,
					    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		old = 0;
}

__attribute__((noinline)) void spin_unlock(spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/* Passes its argument on by a tail jump: a writer by the call graph. */
__attribute__((noinline)) void lock_wrapper(spinlock_t *l)
{
	spin_lock(l);
}

__attribute__((noinline)) long show_stats(const struct stats *s)
{
	return s->hits + s->misses;
}

__attribute__((noinline)) long read_things(void)
{
	return nr_things;
}

__attribute__((noinline)) void set_things(long v)
{
	nr_things = v;
}

__attribute__((noinline)) void bump_counter(void)
{
	counter++;
}

__attribute__((noinline)) void atomic_inc(void)
{
	__atomic_fetch_add(&atomic_count, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) long swap_flag(long v)
{
	return __atomic_exchange_n(&flag, v, __ATOMIC_SEQ_CST);
}

__attribute__((noinline)) long table_get(long i)
{
	return table[i];
}

__attribute__((noinline)) void count_miss(void)
{
	stats.misses = 3;
}

__attribute__((noinline)) void take_lock(void)
{
	spin_lock(&big_lock);
	counter++;
	spin_unlock(&big_lock);
}

__attribute__((noinline)) void take_lock_wrapped(void)
{
	lock_wrapper(&big_lock);
}

__attribute__((noinline)) void take_rip_lock(void)
{
	spinlock_t *p;

	asm("leaq %1, %0" : "=D"(p) : "m"(rip_lock));
	spin_lock(p);
}

__attribute__((noinline)) long stats_total(void)
{
	return show_stats(&stats) + 1;
}

__attribute__((noinline)) void pcpu_inc(void)
{
	asm volatile("incq %%gs:%0" : "+m"(pcpu_hits));
}

__attribute__((noinline)) int pcpu_read(void)
{
	int v;

	asm("movl %%gs:%c1, %0" : "=r"(v) : "i"(&pcpu_seg));
	return v;
}

void _start(void)
{
	set_things(read_things());
	bump_counter();
	atomic_inc();
	swap_flag(2);
	table_get(3);
	count_miss();
	take_lock();
	take_lock_wrapped();
	take_rip_lock();
	stats_total();
	pcpu_inc();
	pcpu_read();
}
