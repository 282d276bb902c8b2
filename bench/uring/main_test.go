//go:build linux

package main

import "testing"

func TestParse(t *testing.T) {
	nginx := "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\ncontent-length: 3\r\nConnection: keep-alive\r\n\r\nok\n"
	chunked := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\no\r\n3;x=y\r\nok\n\r\n0\r\n\r\n"
	for _, tc := range []struct {
		in     string
		n      int
		status int
		bad    bool
	}{
		{in: nginx, n: len(nginx), status: 200},
		{in: nginx[:len(nginx)-1]},
		{in: nginx[:20]},
		{in: chunked, n: len(chunked), status: 200},
		{in: chunked[:len(chunked)-1]},
		{in: chunked[:len(chunked)-7]},
		{in: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", n: 45, status: 404},
		{in: "HTTP/1.1 204 No Content\r\n\r\n", n: 27, status: 204},
		{in: "HTTP/1.1 200 OK\r\n\r\n", bad: true},
		{in: "SSH-2.0-x\r\n\r\n", bad: true},
	} {
		n, status, err := parse([]byte(tc.in))
		if (err != nil) != tc.bad || n != tc.n || (!tc.bad && n > 0 && status != tc.status) {
			t.Errorf("parse(%q) = %d, %d, %v; want %d, %d, bad %v", tc.in, n, status, err, tc.n, tc.status, tc.bad)
		}
	}
}
