package results

import (
	"bufio"
	"bytes"
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
)

// WriteLog writes r as indented JSON between LogBegin and LogEnd, each
// marker on its own line, for ReadLog to find in a log with other lines
// around it.
func WriteLog(w io.Writer, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	var b bytes.Buffer
	b.Grow(len(data) + len(LogBegin) + len(LogEnd) + 3)
	b.WriteString(LogBegin + "\n")
	b.Write(data)
	b.WriteString("\n" + LogEnd + "\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

// ReadLog reads a log to its end and decodes the last complete result in
// it: the lines between the last LogBegin and the LogEnd after it. Lines
// outside a block (progress, notes) are skipped; a marker line may end in
// "\r\n" and have spaces around it. It fails when the log holds no
// complete block, naming a block that was cut off (a LogBegin without its
// LogEnd), and when reading fails. Memory is bounded by one block, not by
// the whole log.
func ReadLog(r io.Reader) (*Result, error) {
	br := bufio.NewReader(r)
	var block, last []byte // the block being read (nil: outside one), the last complete one
	inside, found := false, false
	for {
		line, err := br.ReadBytes('\n')
		switch marker := string(bytes.TrimSpace(line)); {
		case marker == LogBegin:
			block, inside = block[:0], true
		case marker == LogEnd && inside:
			last, block = block, last[:0]
			inside, found = false, true
		case inside:
			block = append(block, line...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read result log: %w", err)
		}
	}
	switch {
	case !found && inside:
		return nil, fmt.Errorf("read result log: the result is cut off: %q without %q after it", LogBegin, LogEnd)
	case !found:
		return nil, errors.New("read result log: no result in the log (no line " + LogBegin + ")")
	}
	var res Result
	if err := json.Unmarshal(last, &res); err != nil {
		return nil, fmt.Errorf("read result log: %w", err)
	}
	if res.Schema != Schema {
		return nil, fmt.Errorf("read result log: schema %q, want %q", res.Schema, Schema)
	}
	return &res, nil
}
