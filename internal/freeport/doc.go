// Package freeport chooses a free TCP port of the loopback interface for
// a program that binds it itself (a target ceiling starts with the port
// in its command line), below the kernel's ephemeral range: the kernel
// takes the local port of every outgoing connection, and of every
// listener bound to port 0, from that range, so a port chosen there and
// bound a moment later can be taken meanwhile (a load generator opens
// connections by the thousand). A port is handed out once per process.
//
// Tests take their ports from it too (testkit.FreePort), so that a port
// is chosen one way for the product and its tests.
package freeport
