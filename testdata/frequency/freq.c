/*
 * freq.c - the testdata/frequency fixture: one hot object per line, and in NEW a
 * neighbour joins each line, written by code of one frequency class
 * (evidence::frequency). Built twice by build.sh (old.elf as is, new.elf with
 * -DNEW); hot-list.toml names the hot objects and the one frequent function of its
 * own (fork_path). What each neighbour's writer is:
 *   A boot_stat:   setup_boot(), in .init.text                  rare: boot code
 *   B done.N:      warn_path()'s `static char done` guard        rare: once-only flag
 *                  (hot_b is the last variable: GCC emits `done` after it)
 *   C reg_count:   foo_register()                               rare: registration
 *   D helper_stat: helper(), called only by foo_register()       rare: only rare callers
 *   E fork_stat:   fork_path(), which writes hot_e too           co-written
 *   F tick_stat:   tick_helper(), called by scheduler_tick()     frequent: called by
 *                  (known hot, built in)                         scheduler_tick()
 *   G plain_stat:  plain_update(), called only by _start         unknown
 *   H slow_stat:   cold_path()'s unlikely branch, in a .cold part rare: .cold part
 * hot_a..hot_h are atomics a hot writer (scheduler_tick) updates. FACTS.md holds
 * nm's and objdump's view of both builds.
 */
#define __aligned(n) __attribute__((aligned(n)))
#define __init __attribute__((section(".init.text"))) noinline
#define noinline __attribute__((noinline))
#define inc(v) __atomic_fetch_add(&(v), 1, __ATOMIC_RELAXED)

long hot_a __aligned(64) = 1;
#ifdef NEW
long boot_stat = 1;
#endif
long hot_c __aligned(64) = 1;
#ifdef NEW
long reg_count = 1;
#endif
long hot_d __aligned(64) = 1;
#ifdef NEW
long helper_stat = 1;
#endif
long hot_e __aligned(64) = 1;
#ifdef NEW
long fork_stat = 1;
#endif
long hot_f __aligned(64) = 1;
#ifdef NEW
long tick_stat = 1;
#endif
long hot_g __aligned(64) = 1;
#ifdef NEW
long plain_stat = 1;
#endif
long hot_h __aligned(64) = 1;
#ifdef NEW
long slow_stat = 1;
#endif
char pad_end[64] __aligned(64) = { 1 };
/* Last, so that warn_path()'s `done`, which GCC emits after every file-scope
 * variable, lands on its line in NEW. */
long hot_b __aligned(64) = 1;

#ifdef NEW
__init void setup_boot(void)
{
	boot_stat = 2;
}

noinline void warn_path(long v)
{
	static char done = 1;

	if (done) {
		done = 0;
		pad_end[1] = v;
	}
}

noinline static void helper(long v)
{
	helper_stat = v;
}

noinline void foo_register(long v)
{
	reg_count = v;
	helper(v + 1);
}

noinline void plain_update(long v)
{
	plain_stat = v;
}

noinline void tick_helper(void)
{
	inc(tick_stat);
}

__attribute__((cold)) noinline void report_slow(void)
{
	asm volatile("" ::: "memory");
}

noinline void cold_path(long v)
{
	if (__builtin_expect(v > 1000, 0)) {
		slow_stat = v;
		report_slow();
	}
}
#endif

noinline void fork_path(void)
{
	inc(hot_e);
#ifdef NEW
	inc(fork_stat);
#endif
}

noinline void scheduler_tick(void)
{
	inc(hot_a);
	inc(hot_b);
	inc(hot_c);
	inc(hot_d);
	inc(hot_f);
	inc(hot_g);
	inc(hot_h);
#ifdef NEW
	tick_helper();
#endif
}

void _start(void)
{
	scheduler_tick();
	fork_path();
#ifdef NEW
	setup_boot();
	warn_path(pad_end[0]);
	foo_register(pad_end[1]);
	plain_update(pad_end[2]);
	cold_path(pad_end[3]);
#endif
}
