package wsx

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The frame codec of the event loop (Loop), RFC 6455 section 5: the loop
// reads sockets itself, so it cannot use gorilla's reader, which owns its
// connection's reads. It parses what a server sends (unmasked frames,
// fragmented messages, control frames) and writes what a client sends
// (masked frames). The tests hold it to gorilla on both sides.

// Opcodes.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// header is a parsed frame header.
type header struct {
	fin  bool
	op   byte
	size int64 // the payload's length
	len  int   // the header's length
}

var errProtocol = errors.New("websocket: protocol error")

// parseHeader parses the header at the start of b, a server's frame. ok is
// false when b does not hold all of it yet.
func parseHeader(b []byte) (h header, ok bool, err error) {
	if len(b) < 2 {
		return h, false, nil
	}
	h.fin, h.op = b[0]&0x80 != 0, b[0]&0x0F
	if b[0]&0x70 != 0 {
		return h, false, fmt.Errorf("%w: reserved bits set (no extension was agreed)", errProtocol)
	}
	if b[1]&0x80 != 0 {
		return h, false, fmt.Errorf("%w: a server's frame is masked", errProtocol)
	}
	switch n := b[1] & 0x7F; n {
	case 126:
		if len(b) < 4 {
			return h, false, nil
		}
		h.size, h.len = int64(binary.BigEndian.Uint16(b[2:])), 4
	case 127:
		if len(b) < 10 {
			return h, false, nil
		}
		u := binary.BigEndian.Uint64(b[2:])
		if u>>63 != 0 {
			return h, false, fmt.Errorf("%w: a frame's length has its high bit set", errProtocol)
		}
		h.size, h.len = int64(u), 10
	default:
		h.size, h.len = int64(n), 2
	}
	switch h.op {
	case opContinuation, opText, opBinary:
	case opClose, opPing, opPong:
		if !h.fin || h.size > 125 {
			return h, false, fmt.Errorf("%w: a control frame is fragmented or over 125 bytes", errProtocol)
		}
	default:
		return h, false, fmt.Errorf("%w: unknown opcode %d", errProtocol, h.op)
	}
	return h, true, nil
}

// appendFrame appends a client's frame of opcode op carrying p, masked with
// key, to dst.
func appendFrame(dst []byte, op byte, p []byte, key uint32) []byte {
	dst = append(dst, 0x80|op)
	switch n := len(p); {
	case n < 126:
		dst = append(dst, 0x80|byte(n))
	case n <= 0xFFFF:
		dst = append(dst, 0x80|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	dst = binary.BigEndian.AppendUint32(dst, key)
	start := len(dst)
	dst = append(dst, p...)
	mask(dst[start:], key)
	return dst
}

// mask XORs b with key, repeated, the first byte with key's highest.
func mask(b []byte, key uint32) {
	k8 := uint64(key)<<32 | uint64(key)
	var kb [8]byte
	binary.BigEndian.PutUint64(kb[:], k8)
	k := binary.LittleEndian.Uint64(kb[:])
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k)
	}
	for ; i < len(b); i++ {
		b[i] ^= kb[i&7]
	}
}

// message assembles a server's messages from its frames.
type message struct {
	frag bool   // a fragmented message is under way
	buf  []byte // its payload so far
	max  int64  // the longest message taken
}

// errTooLong is a message over the socket's MaxFrameBytes.
var errTooLong = errors.New("websocket: read limit exceeded")

// closeError is the server's close frame.
type closeError struct{ code int }

func (e *closeError) Error() string {
	if e.code == 0 {
		return "websocket: close (no status)"
	}
	return fmt.Sprintf("websocket: close %d", e.code)
}

// frameSink receives what parse finds.
type frameSink interface {
	data(p []byte)             // a whole data message
	control(op byte, p []byte) // a ping or pong
}

// parse reads the whole frames at the start of b, passing each whole
// message and control frame to out, and returns how many bytes it used:
// the rest is the start of a frame still coming. A close frame, a protocol
// error or a message over the limit ends it with an error.
func (m *message) parse(b []byte, out frameSink) (int, error) {
	used := 0
	for {
		h, ok, err := parseHeader(b[used:])
		if err != nil {
			return used, err
		}
		if !ok {
			return used, nil
		}
		if h.size > m.max || h.op <= opBinary && m.frag && int64(len(m.buf))+h.size > m.max {
			return used, errTooLong
		}
		if int64(len(b)-used-h.len) < h.size {
			return used, nil
		}
		p := b[used+h.len : used+h.len+int(h.size)]
		used += h.len + int(h.size)
		switch h.op {
		case opText, opBinary:
			if m.frag {
				return used, fmt.Errorf("%w: a new message inside a fragmented one", errProtocol)
			}
			if h.fin {
				out.data(p)
			} else {
				m.frag, m.buf = true, append(m.buf[:0], p...)
			}
		case opContinuation:
			if !m.frag {
				return used, fmt.Errorf("%w: a continuation with no message", errProtocol)
			}
			m.buf = append(m.buf, p...)
			if h.fin {
				m.frag = false
				out.data(m.buf)
			}
		case opClose:
			code := 0
			if len(p) >= 2 {
				code = int(binary.BigEndian.Uint16(p))
			}
			return used, &closeError{code: code}
		default:
			out.control(h.op, p)
		}
	}
}
