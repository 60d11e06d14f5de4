//! user.rs - bindgen's kind of Rust copy of struct user_struct (testdata/lang): the
//! same C name, a Rust layout and Rust member types.
#![no_std]
#![allow(non_camel_case_types)]

#[repr(C)]
pub struct refcount_struct {
    pub refs: i32,
}

#[repr(C)]
pub struct user_struct {
    pub __count: refcount_struct,
    pub unix_inflight: usize,
    pub pipe_bufs: u64,
}

#[no_mangle]
pub static mut RUST_USER: user_struct = user_struct {
    __count: refcount_struct { refs: 1 },
    unix_inflight: 0,
    pipe_bufs: 0,
};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
