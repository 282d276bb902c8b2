package sink

import (
	"fmt"
	"regexp"

	"github.com/tidwall/gjson"
)

// IDRule says where the message id is in each request body. Set one of the
// two fields; with neither, the sink records no ids and counts every body
// as having none.
type IDRule struct {
	// JSON is a gjson path into the JSON body ("text", "message.id"). A
	// missing field or an empty string is no id; a number or other value
	// is taken as its JSON text.
	JSON string
	// Regex is a regular expression (RE2 syntax) matched against the raw
	// body: the id is its first capturing group if it has one, else the
	// whole match.
	Regex string
}

// finder extracts ids; built once at Start from a validated IDRule.
type finder struct {
	path string
	re   *regexp.Regexp
}

func newFinder(r IDRule) (finder, error) {
	switch {
	case r.JSON != "" && r.Regex != "":
		return finder{}, fmt.Errorf("id: set json or regex, not both")
	case r.Regex != "":
		re, err := regexp.Compile(r.Regex)
		if err != nil {
			return finder{}, fmt.Errorf("id.regex: %w", err)
		}
		return finder{re: re}, nil
	}
	return finder{path: r.JSON}, nil
}

// find returns the id in body, copied out of it (body is a reused buffer),
// and whether there was one.
func (f finder) find(body []byte) (string, bool) {
	switch {
	case f.re != nil:
		m := f.re.FindSubmatch(body)
		if m == nil {
			return "", false
		}
		id := m[0]
		if len(m) > 1 {
			id = m[1]
		}
		return string(id), len(id) > 0
	case f.path != "":
		// GetBytes copies the strings it returns out of body.
		id := gjson.GetBytes(body, f.path).String()
		return id, id != ""
	}
	return "", false
}
