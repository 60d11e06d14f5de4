/*
 * typed.h - the structs, per-CPU variables and kernel-like helpers shared by
 * typed.c and ext.c, the fixture of the typed access map (issue 47).
 * Offsets of every member are listed in README.md.
 */
#ifndef TYPED_H
#define TYPED_H

#define __always_inline inline __attribute__((__always_inline__))
#define noinline __attribute__((__noinline__))
#define NULL ((void *)0)
#define NR_CPUS 64

typedef _Bool bool;

typedef struct {
	int counter;
} atomic_t;

struct list_head {
	struct list_head *next, *prev;
};

struct counters {		/* embedded as task.ns and rq.stat */
	long count;
	long bytes;
};

struct slot {			/* element of task.slots[] */
	int x;
	int y;
	long val;
};

struct inode {
	unsigned long i_ino;
	atomic_t i_count;
	unsigned int i_flags;
	long i_size;
};

struct dentry {
	unsigned int d_flags;
	struct inode *d_inode;
	struct dentry *d_parent;
};

struct file {
	unsigned int f_flags;
	atomic_t refcnt;
	struct dentry *f_dentry;
	long f_pos;
};

struct mm {
	long total_vm;
	atomic_t mm_users;
	int map_count;
};

struct task {
	long state;
	int pid;
	int prio;
	atomic_t usage;
	unsigned int flags;
	struct mm *mm;
	struct list_head tasks;		/* container_of(node, struct task, tasks) */
	struct counters ns;
	union {
		long timeout;
		struct task *waker;
	} u;
	struct slot slots[4];
	struct file *file;
};

struct rq {
	unsigned int nr_running;
	int cpu;
	long clock;
	struct task *curr;
	struct counters stat;
};

/* Per-CPU variables, placed as DEFINE_PER_CPU / DEFINE_PER_CPU_SHARED_ALIGNED. */
#define __percpu_var __attribute__((section(".data..percpu")))
#define __percpu_shared_aligned \
	__attribute__((section(".data..percpu..shared_aligned"), aligned(64)))

extern struct task *current_task;
extern unsigned long this_cpu_off;
extern struct rq runqueues;
extern unsigned long __per_cpu_offset[NR_CPUS];

/* x86 percpu.h, 6.1: this_cpu_read_stable(), an absolute %gs: operand. */
#define this_cpu_read_stable(var)					\
({									\
	unsigned long pfo_val__;					\
	asm("movq %%gs:%P1, %0" : "=r"(pfo_val__) : "p"(&(var)));	\
	(typeof(var))pfo_val__;						\
})

static __always_inline struct task *get_current(void)
{
	return this_cpu_read_stable(current_task);
}
#define current get_current()

/* this_cpu_inc() / this_cpu_write() of a 4- and an 8-byte member: %gs:X(%rip). */
#define this_cpu_inc_4(var) asm volatile("incl %%gs:%0" : "+m"(var))
#define this_cpu_write_8(var, val) \
	asm volatile("movq %1, %%gs:%0" : "+m"(var) : "re"(val))

/* arch_raw_cpu_ptr(): this CPU's copy, by adding %gs:this_cpu_off. */
#define this_cpu_ptr(ptr)						\
({									\
	unsigned long tcp_ptr__;					\
	asm volatile("add %%gs:%1, %0"					\
		     : "=r"(tcp_ptr__)					\
		     : "m"(this_cpu_off), "0"(ptr));			\
	(typeof(*(ptr)) *)tcp_ptr__;					\
})

/* compiler-gcc.h's RELOC_HIDE and percpu.h's per_cpu(), as in 6.1. */
#define RELOC_HIDE(ptr, off)						\
({									\
	unsigned long __ptr;						\
	__asm__("" : "=r"(__ptr) : "0"(ptr));				\
	(typeof(ptr))(__ptr + (off));					\
})
#define per_cpu_ptr(ptr, cpu) RELOC_HIDE((ptr), __per_cpu_offset[(cpu)])
#define per_cpu(var, cpu) (*per_cpu_ptr(&(var), cpu))

/* The same without RELOC_HIDE: gcc may fold &var into the displacement. */
#define per_cpu_plain(var, cpu) \
	(*(typeof(&(var)))((char *)&(var) + __per_cpu_offset[(cpu)]))

#define unlikely(x) __builtin_expect(!!(x), 0)

#define offsetof(T, m) __builtin_offsetof(T, m)
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define list_entry(ptr, type, member) container_of(ptr, type, member)

#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

/* arch/x86/include/asm/atomic.h */
static __always_inline int atomic_read(const atomic_t *v)
{
	return READ_ONCE(v->counter);
}

static __always_inline void atomic_inc(atomic_t *v)
{
	asm volatile("lock incl %0" : "+m"(v->counter) : : "memory");
}

static __always_inline bool atomic_dec_and_test(atomic_t *v)
{
	bool e;

	asm volatile("lock decl %0" : "+m"(v->counter), "=@cce"(e) : : "memory");
	return e;
}

static __always_inline bool atomic_sub_and_test(int i, atomic_t *v)
{
	return __atomic_fetch_sub(&v->counter, i, __ATOMIC_SEQ_CST) == i;
}

/* Out of line, in ext.c: calls end what they clobber. */
void work(void *p);
void __fput(struct file *f);
void __mmput(struct mm *mm);
void refcount_warn(struct file *f) __attribute__((__cold__));

#endif
