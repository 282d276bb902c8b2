package plan

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxDataProblems bounds the problems reported for one data file: past a
// few, the file is wrong as a whole.
const maxDataProblems = 5

// Users returns the rows of data.users, one per user, each mapping column
// names to values; nil when data.users is not set. Validate reads the file.
// The rows are shared: do not modify them.
func (p *Plan) Users() []map[string]string {
	return p.users
}

// UserColumns returns the column names of data.users, in file order for a
// CSV and sorted for JSON; nil when data.users is not set.
func (p *Plan) UserColumns() []string {
	return p.userColumns
}

// usersPath resolves data.users: relative to the plan file's folder, or to
// the working directory for a plan built from flags.
// UsersPath is the users file's path as the plan reads it (relative to
// the plan file's folder), or "" when it has none.
func (p *Plan) UsersPath() string {
	if p.Data.Users == "" {
		return ""
	}
	return p.usersPath()
}

func (p *Plan) usersPath() string {
	u := p.Data.Users
	if p.File == "" || filepath.IsAbs(u) {
		return u
	}
	return filepath.Join(filepath.Dir(p.File), u)
}

// MaxBodyFileBytes bounds a request's body_file.
const MaxBodyFileBytes = 16 << 20

// BodyPath is the path of a request's body_file as the plan reads it
// (relative to the plan file's folder), or "" when it has none.
func (p *Plan) BodyPath(r *Request) string {
	if r.BodyFile == "" || p.File == "" || filepath.IsAbs(r.BodyFile) {
		return r.BodyFile
	}
	return filepath.Join(filepath.Dir(p.File), r.BodyFile)
}

// BodyFiles lists the field paths of the requests (the login's, the
// scenarios' and their steps') whose body is a body_file, in plan order:
// "scenarios[0].request.body_file".
func (p *Plan) BodyFiles() []string {
	var out []string
	for i, st := range p.Login {
		if st.Request.BodyFile != "" {
			out = append(out, fmt.Sprintf("login[%d].request.body_file", i))
		}
	}
	for i, sc := range p.Scenarios {
		if sc.Request.BodyFile != "" {
			out = append(out, fmt.Sprintf("scenarios[%d].request.body_file", i))
		}
		for j, st := range sc.Steps {
			if st.Request.BodyFile != "" {
				out = append(out, fmt.Sprintf("scenarios[%d].steps[%d].request.body_file", i, j))
			}
		}
	}
	return out
}

// bodyFileProblem says what is wrong with a body_file at path, "" when
// nothing is: it must be a regular file of at most MaxBodyFileBytes.
func bodyFileProblem(path string) string {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Sprintf("cannot read the body's file: %v", unwrapPath(err))
	case !st.Mode().IsRegular():
		return "want a regular file holding the body"
	case st.Size() > MaxBodyFileBytes:
		return fmt.Sprintf("the body's file has %d bytes, more than %d MiB", st.Size(), MaxBodyFileBytes>>20)
	}
	return ""
}

// dataProblems collects the problems of one data file, all placed at the
// data.users key, each naming the file and (when known) its line.
type dataProblems struct {
	file  string
	msgs  []string
	extra int // problems past maxDataProblems
}

// add records a problem at line (0: the file as a whole).
func (d *dataProblems) add(line int, format string, args ...any) {
	if len(d.msgs) >= maxDataProblems {
		d.extra++
		return
	}
	loc := d.file
	if line > 0 {
		loc = fmt.Sprintf("%s:%d", d.file, line)
	}
	d.msgs = append(d.msgs, loc+": "+fmt.Sprintf(format, args...))
}

// data reads data.users into the plan, reporting what is wrong with it.
func (c *checker) data() {
	c.p.users, c.p.userColumns = nil, nil
	if c.p.Data.Users == "" {
		return
	}
	path := c.p.usersPath()
	d := &dataProblems{file: path}
	c.p.userColumns, c.p.users = readUsers(path, d)
	for _, msg := range d.msgs {
		c.add("data.users", "%s", msg)
	}
	if d.extra > 0 {
		c.add("data.users", "%s: and %d more problems", path, d.extra)
	}
	if len(d.msgs) > 0 {
		c.p.users = nil
	}
}

// readUsers reads a users file by its extension.
func readUsers(path string, d *dataProblems) (columns []string, rows []map[string]string) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".csv" && ext != ".json" {
		d.add(0, "want a .csv or .json file of users, not %q", filepath.Ext(path))
		return nil, nil
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		d.add(0, "cannot read the users file: %v", unwrapPath(err))
		return nil, nil
	case !info.Mode().IsRegular():
		d.add(0, "want a regular file of users")
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		d.add(0, "cannot read the users file: %v", unwrapPath(err))
		return nil, nil
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if ext == ".csv" {
		columns, rows = readUsersCSV(data, d)
	} else {
		columns, rows = readUsersJSON(data, d)
	}
	if columns != nil && len(rows) == 0 && len(d.msgs) == 0 {
		d.add(0, "no users: want one row per virtual user after the column names")
	}
	return columns, rows
}

// unwrapPath drops the path from an *os.PathError, which the message
// already names.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readUsersCSV reads a CSV file: a header row of unique, non-empty column
// names, then one row per user with as many fields.
func readUsersCSV(data []byte, d *dataProblems) (columns []string, rows []map[string]string) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1 // checked here, to say which row and how
	header, err := r.Read()
	switch {
	case errors.Is(err, io.EOF):
		d.add(0, "the file is empty: want a row of column names, then one row per user")
		return nil, nil
	case err != nil:
		csvProblem(d, err)
		return nil, nil
	}
	seen := map[string]bool{}
	for i, name := range header {
		switch {
		case strings.TrimSpace(name) == "":
			d.add(1, "column %d has no name", i+1)
		case seen[name]:
			d.add(1, "column %q appears twice", name)
		}
		seen[name] = true
	}
	if len(d.msgs) > 0 {
		return nil, nil
	}
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			csvProblem(d, err)
			break
		}
		if len(record) != len(header) {
			line, _ := r.FieldPos(0)
			d.add(line, "want %d fields, one per column, not %d", len(header), len(record))
			continue
		}
		row := make(map[string]string, len(header))
		for i, name := range header {
			row[name] = record[i]
		}
		rows = append(rows, row)
	}
	return header, rows
}

// csvProblem reports a CSV syntax error at its line.
func csvProblem(d *dataProblems, err error) {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		d.add(pe.Line, "%v", pe.Err)
		return
	}
	d.add(0, "%v", err)
}

// readUsersJSON reads a JSON array of objects whose values are strings,
// numbers or booleans, all with the same keys; values are kept as text.
func readUsersJSON(data []byte, d *dataProblems) (columns []string, rows []map[string]string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	const want = `want a JSON array of objects, such as [{"email": "a@example.com"}]`
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		d.add(lineAt(data, 0), "%s", want)
		return nil, nil
	}
	for i := 0; dec.More(); i++ {
		line := lineAt(data, dec.InputOffset())
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				d.add(line, "[%d]: %v", i, err)
				return nil, nil
			}
			d.add(line, "[%d]: want an object of column names to values, not a JSON %s", i, te.Value)
			continue
		}
		keys := slices.Sorted(maps.Keys(obj))
		if columns == nil {
			columns = keys
		} else if !slices.Equal(keys, columns) {
			d.add(line, "[%d]: has keys %s, want those of [0]: %s", i, strings.Join(keys, ", "), strings.Join(columns, ", "))
			continue
		}
		if row := jsonRow(obj, i, line, d); row != nil {
			rows = append(rows, row)
		}
	}
	if _, err := dec.Token(); err != nil && len(d.msgs) == 0 {
		d.add(lineAt(data, dec.InputOffset()), "%s: %v", want, err)
	}
	if columns == nil && len(d.msgs) == 0 {
		columns = []string{}
	}
	return columns, rows
}

// jsonRow turns a JSON object's values into text, or reports those that
// are not a string, number or boolean.
func jsonRow(obj map[string]any, item, line int, d *dataProblems) map[string]string {
	row := make(map[string]string, len(obj))
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		switch v := obj[k].(type) {
		case string:
			row[k] = v
		case json.Number:
			row[k] = v.String()
		case bool:
			row[k] = fmt.Sprint(v)
		default:
			d.add(line, "[%d].%s: want a string, number or boolean, not %s", item, k, jsonKind(v))
			return nil
		}
	}
	return row
}

// jsonKind names a decoded JSON value's kind.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// lineAt returns the 1-based line of the first token at or after offset,
// past whitespace and a comma.
func lineAt(data []byte, offset int64) int {
	i := int(min(max(offset, 0), int64(len(data))))
	for i < len(data) && strings.IndexByte(" \t\r\n,", data[i]) >= 0 {
		i++
	}
	return 1 + bytes.Count(data[:i], []byte("\n"))
}
