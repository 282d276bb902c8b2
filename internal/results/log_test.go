package results

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/iotest"
)

func logOf(t *testing.T, rs ...*Result) string {
	t.Helper()
	var b bytes.Buffer
	for i, r := range rs {
		b.WriteString("ceiling: step " + string(rune('1'+i)) + " done\n")
		if err := WriteLog(&b, r); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func TestWriteLogReadLog(t *testing.T) {
	first := &Result{Schema: Schema, Command: "first", Steps: []Step{step(100, 5)}}
	second := &Result{Schema: Schema, Command: "second", Steps: []Step{step(100, 5), step(200, 7)}}
	full := logOf(t, first, second)
	if !strings.HasPrefix(strings.SplitN(full, "\n", 3)[1], LogBegin) || !strings.Contains(full, "\n"+LogEnd+"\n"+LogSum+" ") {
		t.Fatalf("WriteLog = %q, want the markers on their own lines, the checksum after the end", full)
	}
	cut := full[:strings.LastIndex(full, LogEnd)-10] // the second block without its end
	unsummed := strings.Replace(logOf(t, first), LogSum, "ceiling: done", 1)
	tests := []struct {
		name, log string
		want      string // the Command of the result read
	}{
		{"one block after progress", logOf(t, first), "first"},
		{"the last of two", full, "second"},
		{"the last complete one when the last is cut off", cut, "first"},
		{"CRLF line ends and spaces around the markers", strings.ReplaceAll(strings.ReplaceAll(logOf(t, first), "\n", "\r\n"), LogBegin, "  "+LogBegin+" "), "first"},
		{"no newline after the end marker", strings.TrimSuffix(logOf(t, first), "\n"), "first"},
		{"progress after the block", logOf(t, first) + "ceiling: result: /tmp/result.json\n", "first"},
		{"no checksum (a log written before checksums)", unsummed, "first"},
		// A pod's log merges stdout and stderr as they come: a line of
		// stderr can fall within the result printed on stdout.
		{"a line of the other stream within the block", strings.Replace(logOf(t, first), `  "command"`, "ceiling: result: /tmp/result.json\n  \"command\"", 1), "first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ReadLog(strings.NewReader(tt.log))
			if err != nil {
				t.Fatalf("ReadLog = %v, want the result %q", err, tt.want)
			}
			if r.Command != tt.want {
				t.Errorf("ReadLog().Command = %q, want %q", r.Command, tt.want)
			}
		})
	}
	if r, _ := ReadLog(strings.NewReader(full)); len(r.Steps) != 2 || r.Steps[1].LatencyMS.P99 != 7 {
		t.Errorf("ReadLog().Steps = %+v, want second's two steps", r.Steps)
	}
}

func TestReadLogErrors(t *testing.T) {
	one := logOf(t, &Result{Schema: Schema, Command: "x"})
	tests := []struct {
		name, log, want string
	}{
		{"empty", "", "no result in the log"},
		{"progress only", "ceiling: step 1\nceiling: step 2\n", "no result in the log"},
		{"cut off", one[:strings.Index(one, LogEnd)-5], "cut off"},
		{"a line changed", strings.Replace(one, `"command": "x"`, `"command": "y"`, 1), "the result is damaged: its"},
		{"a line lost", strings.Replace(one, "  \"command\": \"x\",\n", "", 1), "the result is damaged: its"},
		{"the checksum cut", one[:len(one)-20], "checksum line is damaged"},
		{"an end without a begin", "{}\n" + LogEnd + "\n", "no result in the log"},
		{"not JSON", LogBegin + "\n{not json\n" + LogEnd + "\n", "invalid character"},
		{"another schema", LogBegin + "\n{\"schema\": \"other/v9\"}\n" + LogEnd + "\n", `schema "other/v9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ReadLog(strings.NewReader(tt.log))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadLog = %v, %v, want an error containing %q", r, err, tt.want)
			}
		})
	}
	boom := errors.New("connection reset")
	if _, err := ReadLog(iotest.TimeoutReader(iotest.ErrReader(boom))); !errors.Is(err, boom) {
		t.Errorf("ReadLog(a failing reader) = %v, want it to wrap %v", err, boom)
	}
}

// TestReadLogLongLines: a step's encoded histograms make lines far longer
// than bufio.Scanner's default 64 KiB token.
func TestReadLogLongLines(t *testing.T) {
	r := &Result{Schema: Schema, Command: strings.Repeat("x", 200<<10)}
	back, err := ReadLog(strings.NewReader(logOf(t, r)))
	if err != nil || back.Command != r.Command {
		t.Errorf("ReadLog(a 200 KiB line) = %v, want the result", err)
	}
}

func FuzzReadLog(f *testing.F) {
	var b bytes.Buffer
	WriteLog(&b, &Result{Schema: Schema, Command: "x"})
	f.Add(b.String())
	f.Add(LogBegin + "\n{}\n")
	f.Add("progress\n" + LogEnd + "\n" + LogBegin + "\n")
	f.Fuzz(func(t *testing.T, log string) {
		r, err := ReadLog(strings.NewReader(log))
		if (r == nil) == (err == nil) {
			t.Errorf("ReadLog = %v, %v: want a result or an error", r, err)
		}
	})
}

// The file ReadLogFile gives back is result.json byte for byte, as Write
// writes it, also when another stream's line fell within the block.
func TestReadLogFile(t *testing.T) {
	r := &Result{Schema: Schema, Command: "x", Steps: []Step{step(100, 5)}}
	path := t.TempDir() + "/result.json"
	if err := Write(path, r, Public); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	log := strings.Replace(logOf(t, r), `  "command"`, "ceiling: result: /tmp/result.json\n  \"command\"", 1)
	_, got, err := ReadLogFile(strings.NewReader(log))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("ReadLogFile = %d bytes, %v; want the %d bytes of result.json", len(got), err, len(want))
	}
}
