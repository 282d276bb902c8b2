// Package epoll is the Linux system-call layer the event loops share (the
// HTTP loop of httpx and the WebSocket loop of wsx): an epoll set
// with an eventfd to wake its wait, a read that says when the kernel
// received the bytes, and reads, writes and sleeps that do not tell Go's
// scheduler. Only Linux has it; elsewhere the package is empty and the
// loops fall back to goroutines.
package epoll
