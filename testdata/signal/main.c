/*
 * main.c - the testdata/signal fixture (built twice: old, and -DNEW).
 * Each block is one rule of layout-diff's diff; EXPECTED.md holds the facts.
 */
typedef struct { int counter; } atomic_t;
struct lock_class_key { };

#define __aligned(n) __attribute__((aligned(n)))
#define __used __attribute__((used))
#define __initdata __attribute__((section(".init.data"), used))
#define __ro_after_init __attribute__((section(".data..ro_after_init"), used))
#define noinline __attribute__((noinline, used))

/* Rule: a global that loses its write-hot neighbour is an improvement.
 * Old: lonely_count shares its line with every object after it, down to
 * busy_lock (the last, in b/dup.c).  New: a line-aligned spacer after it
 * pushes all of them two lines down. */
__used atomic_t lonely_count __aligned(64) = { 1 };
#ifdef NEW
__used char spacer_a[64] __aligned(64) = { 1 };
#endif

/* Rule: zero-size symbols and aliases are not co-tenants.  zcount moves
 * (spacer_a above); the zero-size __key_zero and the alias zcount_alias sit
 * on its line in both builds. */
__used __attribute__((section(".data"))) struct lock_class_key __key_zero;
__used long zcount = 2;
extern long zcount_alias __attribute__((alias("zcount")));

/* Rule: boot-only objects (.init.data) are never flagged straddling.
 * New: init_pad in front makes boot_copy straddle a line. */
#ifdef NEW
__initdata char init_pad[40] __aligned(8) = { 1 };
#endif
__initdata char boot_copy[48] __aligned(8) = { 2 };

/* Rule: read-only-after-init objects, found by the boundary symbols only
 * (their section is merged into .data), are never flagged straddling. */
#ifdef NEW
__ro_after_init char roai_pad[40] __aligned(8) = { 1 };
#endif
__ro_after_init char roai_table[48] __aligned(8) = { 3 };

/* Rule: reordered functions.  The same two functions in swapped order: the
 * run that starts at f_alpha is not caused by f_lead, its old neighbour. */
noinline int f_lead(int x) { return x * 3 + 1; }
#ifndef NEW
noinline int f_alpha(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * i ^ x; return s + 7; }
noinline int f_beta(int x) { return x - 5; }
#else
noinline int f_beta(int x) { return x - 5; }
noinline int f_alpha(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * i ^ x; return s + 7; }
#endif
noinline int f_gamma(int x) { return x ^ 0x55; }

/* Rule: phase changes alone are information.  f_grow grows in the new
 * build, so f_tail starts at another offset in its line. */
noinline int f_grow(int x)
{
#ifdef NEW
	int s = 0;
	for (int i = 0; i < x; i++) s += (i << 2) ^ (x >> 1) ^ (i * 11);
	return s;
#else
	return x + 1;
#endif
}
noinline int f_tail(int x) { return x * 9; }
