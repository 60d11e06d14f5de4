/*
 * zero.c - the testdata/zero fixture: zero-byte symbols on an object's line, ahead
 * of its real neighbours. Without CONFIG_LOCKDEP, `struct lock_class_key` is empty,
 * and each lock initialised in a function (`spin_lock_init`, `mutex_init`) leaves a
 * `static struct lock_class_key __key` of 0 bytes, which GCC names `__key.N`: a real
 * kernel has hundreds of them in .bss, each a symbol of size 0 at the address of the
 * object after it.
 * build.sh compiles it twice and links the two units in order:
 *   zero-a.o: hot_count (4 B, aligned to a line) and keys_init(), whose nine keys
 *     GCC emits after hot_count, at the end of the unit's .bss;
 *   zero-b.o (-DNEIGHBOURS): lock_a and lock_b, written by locks_init(), at the
 *     address the keys have: the keys sit between hot_count and its real neighbours.
 * FACTS.md holds nm's view of zero.elf.
 */
#define __aligned(n) __attribute__((aligned(n)))

struct spin { int v; };

#ifndef NEIGHBOURS
struct lock_class_key { };

/* The address of a new zero-byte key, as lockdep's init macros take it. */
#define KEY() ({ static struct lock_class_key __key; (void *)&__key; })

int hot_count __aligned(64);

void keys_init(void **keys)
{
	keys[0] = KEY();
	keys[1] = KEY();
	keys[2] = KEY();
	keys[3] = KEY();
	keys[4] = KEY();
	keys[5] = KEY();
	keys[6] = KEY();
	keys[7] = KEY();
	keys[8] = KEY();
}

void locks_init(void);

void _start(void)
{
	void *keys[9];

	keys_init(keys);
	locks_init();
	hot_count++;
}
#else
struct spin lock_a;
struct spin lock_b;

void locks_init(void)
{
	lock_a.v = 0;
	lock_b.v = 0;
}
#endif
