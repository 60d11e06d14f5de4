/*
 * typed.c - the fixture of the typed access map (issue 47): struct members
 * reached through parameters, locals, inlined helpers, pointer chains,
 * container_of, a current-like per-CPU pointer, arrays of structs, a
 * pointer spilled to the stack and reloaded, a union, a nested struct, and
 * a per-CPU struct updated through %gs and read remotely with per_cpu().
 * Built with ext.c by build.sh; the accesses the source makes are listed,
 * from the source, in FACTS.md.
 */
#include "typed.h"

#define PF_KTHREAD 0x1
#define F_BAD 0x80

struct task *current_task __percpu_var;
unsigned long this_cpu_off __percpu_var;
struct rq runqueues __percpu_shared_aligned;
unsigned long __per_cpu_offset[NR_CPUS];

struct task init_task;
struct mm init_mm;
struct file init_file;
struct dentry root_dentry;
struct inode root_inode;
struct list_head task_list;

/* ---- inline helpers taking a struct pointer ---- */

static inline void get_file(struct file *f)
{
	atomic_inc(&f->refcnt);
}

static inline struct inode *file_inode(const struct file *f)
{
	return f->f_dentry->d_inode;
}

static inline void get_task_struct(struct task *t)
{
	atomic_inc(&t->usage);
}

static inline void task_account(struct task *t, long bytes)
{
	t->ns.count++;
	t->ns.bytes += bytes;
}

static inline void mmget(struct mm *mm)
{
	atomic_inc(&mm->mm_users);
}

static inline void mmput(struct mm *mm)
{
	if (atomic_sub_and_test(1, &mm->mm_users))
		__mmput(mm);
}

static inline void slot_touch(struct slot *s, long v)
{
	s->x++;
	s->val = v;
}

static inline void list_add_tail(struct list_head *new, struct list_head *head)
{
	struct list_head *prev = head->prev;

	head->prev = new;
	new->next = head;
	new->prev = prev;
	WRITE_ONCE(prev->next, new);
}

/* ---- parameters ---- */

noinline int task_set_prio(struct task *t, int prio)
{
	if (t->flags & PF_KTHREAD)
		prio = 0;
	t->prio = prio;
	return t->pid;
}

/* ---- inline helpers: atomics on refcnt.counter, a read-modify-write ---- */

noinline long fget_pos(struct file *f)
{
	get_file(f);
	f->f_pos++;
	return f->f_pos;
}

/* The unlikely branch goes to fput.cold at -O2 (gcc splits it out). */
noinline void fput(struct file *f)
{
	if (unlikely(atomic_read(&f->refcnt) <= 0)) {
		f->f_flags |= F_BAD;
		refcount_warn(f);
		return;
	}
	if (atomic_dec_and_test(&f->refcnt))
		__fput(f);
}

/* ---- pointer chains a->b->c ---- */

noinline long file_isize(const struct file *f)
{
	return file_inode(f)->i_size;
}

noinline unsigned long dentry_parent_ino(const struct dentry *d)
{
	return d->d_parent->d_inode->i_ino;
}

/* ---- a local pointer, from a chain ---- */

noinline void file_touch(struct file *f)
{
	struct inode *inode = file_inode(f);

	inode->i_flags |= 1;
	atomic_inc(&inode->i_count);
	f->f_dentry->d_flags = 2;
}

/* ---- container_of on an embedded list_head ---- */

noinline int task_pid_of(struct list_head *node)
{
	struct task *t = list_entry(node, struct task, tasks);
	struct task *next = list_entry(node->next, struct task, tasks);

	return t->pid + next->prio;
}

noinline long count_runnable(struct list_head *head)
{
	struct list_head *pos;
	long n = 0;

	for (pos = head->next; pos != head; pos = pos->next) {
		struct task *t = list_entry(pos, struct task, tasks);

		if (t->state == 0)
			n += t->ns.count;
	}
	return n;
}

noinline void task_enqueue(struct list_head *head, struct task *t)
{
	list_add_tail(&t->tasks, head);
}

/* ---- current: a per-CPU pointer read through %gs ---- */

noinline int current_account(long bytes)
{
	struct task *t = current;

	task_account(t, bytes);
	return t->pid;
}

noinline void current_mmget(void)
{
	mmget(current->mm);
	__atomic_exchange_n(&current->state, 1, __ATOMIC_SEQ_CST);
}

/* ---- a local from a member, then fetch_sub through an inline helper ---- */

noinline void task_exit_mm(struct task *t)
{
	struct mm *mm = t->mm;

	t->mm = NULL;
	mmput(mm);
}

/* ---- arrays of structs ---- */

noinline int slots_init(struct task *t)
{
	t->slots[2].x = 1;
	t->slots[3].val = -1;
	return t->slots[1].y;
}

noinline long slot_val(const struct task *t, int i)
{
	return t->slots[i].val;
}

noinline int slot_bump(struct task *t, int i, long v)
{
	struct slot *s = &t->slots[i];

	slot_touch(s, v);
	return s->y;
}

/* ---- a union: two alternatives at one offset ---- */

noinline long task_set_waker(struct task *t, struct task *w)
{
	long old = t->u.timeout;

	get_task_struct(w);
	t->u.waker = w;
	return old;
}

/* ---- pointers spilled to the stack and reloaded ---- */

noinline long spill_clobber(struct task *t, struct file *f, int n)
{
	long sum = 0;

	while (n-- > 0) {
		asm volatile("" : : : "rax", "rbx", "rcx", "rdx", "rsi", "rdi",
			     "rbp", "r8", "r9", "r10", "r11", "r12", "r13",
			     "r14", "r15", "memory");
		sum += t->ns.bytes + f->f_pos;
	}
	return sum;
}

noinline long spill_loop(struct task *t, int n)
{
	struct file *f = t->file;
	struct mm *mm = t->mm;
	struct dentry *d = f->f_dentry;
	struct inode *inode = d->d_inode;
	long sum = 0;
	int i;

	for (i = 0; i < n; i++) {
		work(t);
		sum += t->ns.count + f->f_pos + mm->total_vm + d->d_flags +
		       inode->i_size;
	}
	return sum;
}

/* ---- a per-CPU struct: updated locally through %gs, read remotely ---- */

noinline void rq_enqueue(struct task *p)
{
	struct rq *rq;

	this_cpu_inc_4(runqueues.nr_running);
	this_cpu_write_8(runqueues.curr, p);
	rq = this_cpu_ptr(&runqueues);
	rq->clock++;
	rq->stat.count += p->prio;
}

noinline long rq_load(int cpu)
{
	return per_cpu(runqueues, cpu).nr_running +
	       per_cpu(runqueues, cpu).stat.bytes;
}

noinline int rq_curr_pid(int cpu)
{
	struct rq *rq = &per_cpu_plain(runqueues, cpu);

	return rq->curr->pid + (int)rq->clock;
}

/* Results go to a global, so that no call is dropped as unused. */
volatile long sink;

void _start(void)
{
	sink += task_set_prio(&init_task, 3);
	sink += fget_pos(&init_file);
	fput(&init_file);
	sink += file_isize(&init_file);
	sink += dentry_parent_ino(&root_dentry);
	file_touch(&init_file);
	sink += task_pid_of(&init_task.tasks);
	sink += count_runnable(&task_list);
	task_enqueue(&task_list, &init_task);
	sink += current_account(64);
	current_mmget();
	task_exit_mm(&init_task);
	sink += slots_init(&init_task);
	sink += slot_val(&init_task, 1);
	sink += slot_bump(&init_task, 2, 7);
	sink += task_set_waker(&init_task, &init_task);
	sink += spill_clobber(&init_task, &init_file, 4);
	sink += spill_loop(&init_task, 4);
	rq_enqueue(&init_task);
	sink += rq_load(1);
	sink += rq_curr_pid(1);
}
