package results

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// LogBegin and LogEnd are the lines around a result written into a log
// (a coordinator's standard output, read back from a pod's log by
// `ceiling k8s --apply`). No line of the indented JSON between them can
// equal either: every line of it starts with a brace, a bracket or a space.
const (
	LogBegin = "----- BEGIN ceiling result.json -----"
	LogEnd   = "----- END ceiling result.json -----"
	// LogSum starts the line after LogEnd, "LogSum HEX -----": HEX is the
	// SHA-256 of the lines between the markers, each ended by "\n" (the
	// bytes of result.json as Write writes it), so that a reader tells a
	// whole result from one a log's rotation or a cut connection damaged.
	LogSum = "----- SHA256 ceiling result.json"
)

// WriteLog writes r as indented JSON between LogBegin and LogEnd, each
// marker on its own line, then its checksum (LogSum), for ReadLog to find
// in a log with other lines around it.
func WriteLog(w io.Writer, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	data = append(data, '\n')
	sum := sha256.Sum256(data)
	var b bytes.Buffer
	b.Grow(len(data) + len(LogBegin) + len(LogEnd) + len(LogSum) + 2*sha256.Size + 16)
	b.WriteString(LogBegin + "\n")
	b.Write(data)
	b.WriteString(LogEnd + "\n")
	b.WriteString(LogSum + " " + hex.EncodeToString(sum[:]) + " -----\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

// ReadLog reads a log to its end and decodes the last complete result in
// it: the lines between the last LogBegin and the LogEnd after it. Lines
// outside a block (progress, notes) are skipped, and so are lines within
// one that no indented JSON starts as (another stream's, merged into a
// pod's log as they came); a marker line may end in
// "\r\n" and have spaces around it. When the line after LogEnd is a
// checksum (LogSum), the block must match it: a block that does not is
// damaged, an error (a log written before checksums has none, and is read
// as it is). It fails too when the log holds no complete block, naming a
// block that was cut off (a LogBegin without its LogEnd), and when reading
// fails. Memory is bounded by one block, not by the whole log.
func ReadLog(r io.Reader) (*Result, error) {
	res, _, err := ReadLogFile(r)
	return res, err
}

// ReadLogFile is ReadLog, and returns the result's file too: the lines of
// its block, each ended by "\n", the bytes that Write writes (and that
// its checksum, when the log has one, was found to match).
func ReadLogFile(r io.Reader) (*Result, []byte, error) {
	br := bufio.NewReader(r)
	var block, last []byte // the block being read (nil: outside one), the last complete one
	inside, found := false, false
	summed := false // the line after the last complete block's end is next
	var damaged error
	for {
		line, err := br.ReadBytes('\n')
		trimmed := bytes.TrimSpace(line)
		sumLine := false
		if summed && len(trimmed) > 0 {
			summed = false
			if sumLine = bytes.HasPrefix(trimmed, []byte(LogSum)); sumLine {
				damaged = checkSum(last, trimmed)
			}
		}
		switch marker := string(trimmed); {
		case sumLine:
		case marker == LogBegin:
			block, inside = block[:0], true
		case marker == LogEnd && inside:
			last, block = block, last[:0]
			inside, found, summed, damaged = false, true, true, nil
		case inside && !jsonLine(line):
			// A line of the other stream: a pod's log merges stdout,
			// which holds the result, and stderr as they come.
		case inside:
			block = append(append(block, bytes.TrimRight(line, "\r\n")...), '\n')
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read result log: %w", err)
		}
	}
	switch {
	case !found && inside:
		return nil, nil, fmt.Errorf("read result log: the result is cut off: %q without %q after it", LogBegin, LogEnd)
	case !found:
		return nil, nil, errors.New("read result log: no result in the log (no line " + LogBegin + ")")
	case damaged != nil:
		return nil, nil, fmt.Errorf("read result log: %w", damaged)
	}
	var res Result
	if err := json.Unmarshal(last, &res); err != nil {
		return nil, nil, fmt.Errorf("read result log: %w", err)
	}
	if res.Schema != Schema {
		return nil, nil, fmt.Errorf("read result log: schema %q, want %q", res.Schema, Schema)
	}
	return &res, last, nil
}

// jsonLine reports whether line can be one of WriteLog's indented JSON:
// the first starts with "{", the last with "}", every other with a space.
func jsonLine(line []byte) bool {
	return len(line) > 0 && (line[0] == '{' || line[0] == '}' || line[0] == ' ')
}

// checkSum checks block against its checksum line, "LogSum HEX -----".
func checkSum(block, line []byte) error {
	sum := sha256.Sum256(block)
	want, prefixed := bytes.CutPrefix(line, []byte(LogSum+" "))
	want, suffixed := bytes.CutSuffix(want, []byte(" -----"))
	if !prefixed || !suffixed || len(want) != 2*sha256.Size {
		return fmt.Errorf("the result's checksum line is damaged: %q", line)
	}
	if got := hex.EncodeToString(sum[:]); got != string(want) {
		return fmt.Errorf("the result is damaged: its %d bytes have the SHA-256 %s, the log says %s (a log rotated or cut while it was read)", len(block), got, want)
	}
	return nil
}
