// Package inputfile reads the files a user names to ceiling whole, through
// a limit: a HAR recording, an OpenAPI document, a file of curl commands
// and the bodies it names, a result file, a token file. A regular file, a
// pipe (a shell's <(curl …)), a FIFO or a device (/dev/zero) are all read
// the same way: never past the limit, whatever their size says (a pipe's
// and a device's say 0), and not past the end of a context, so that a
// pipe that never ends or a FIFO that nobody writes cannot hold a command
// that was told to stop.
//
// It knows nothing of what the files hold: each caller gives the limit
// for its kind of file, and says in its own words which file it was.
//
// Concurrency: Read may be called from any goroutine. While a FIFO waits
// for a writer, its opening goroutine outlives a cancelled Read until one
// comes (an open(2) cannot be interrupted); nothing else outlives it.
package inputfile
