/*
 * entry.S - assembly entry code as the kernel writes it (arch/x86/entry/entry_64.S):
 * a 64-byte aligned symbol with a size and no type (SYM_CODE_START/SYM_CODE_END give
 * STT_NOTYPE), and no DWARF subprogram.
 */
	.text
	.p2align 6
	.globl entry_SYSCALL_64
entry_SYSCALL_64:
	swapgs
	movq %rsp, %rax
	pushq %rax
	popq %rax
	swapgs
	ret
	.size entry_SYSCALL_64, .-entry_SYSCALL_64
