package plan

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// errNotDuration is the message for any value that is not a Go duration string.
var errNotDuration = errors.New(`want a duration such as "60s"`)

// UnmarshalYAML reads a Go duration string such as "250ms" or "1m30s". A bare
// number is refused, since its unit would be a guess; "0s" is zero. Negative
// durations are accepted here and refused by Validate, which knows the field.
func (d *Duration) UnmarshalYAML(node ast.Node) error {
	if tag, ok := node.(*ast.TagNode); ok {
		node = tag.Value
	}
	s, ok := node.(*ast.StringNode)
	if !ok {
		return errNotDuration
	}
	v, err := time.ParseDuration(strings.TrimSpace(s.Value))
	if err != nil {
		return errNotDuration
	}
	d.Duration = v
	return nil
}

// MarshalYAML writes the duration as a Go duration string, so that a plan
// built from flags can be written out and parsed back.
func (d Duration) MarshalYAML() (any, error) {
	return d.String(), nil
}

// ParseDuration parses a non-negative Go duration such as "60s" or "1m30s",
// as given to --step, --warmup and --timeout.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w", s, errNotDuration)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q: want a non-negative duration such as \"60s\"", s)
	}
	return d, nil
}

// errNotPercent is the message for any value that is not a percentage.
var errNotPercent = errors.New(`want a percentage such as "1%"`)

// UnmarshalYAML reads a percentage such as "1%" or "0.5%". A bare number is
// refused: 1 could mean 1 % or 100 %.
func (p *Percent) UnmarshalYAML(node ast.Node) error {
	if tag, ok := node.(*ast.TagNode); ok {
		node = tag.Value
	}
	s, ok := node.(*ast.StringNode)
	if !ok {
		return errNotPercent
	}
	v, err := ParsePercent(s.Value)
	if err != nil {
		return errNotPercent
	}
	p.Value = v
	return nil
}

// ParsePercent parses a percentage such as "1%" or "0.5%", from 0 to 100,
// as given to --precision and --error-rate. A bare number is refused.
func ParsePercent(s string) (float64, error) {
	num, found := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !found || err != nil || math.IsNaN(v) || v < 0 || v > 100 {
		return 0, fmt.Errorf("%q: %w", s, errNotPercent)
	}
	return v, nil
}

// MarshalYAML writes the percentage as "1%".
func (p Percent) MarshalYAML() (any, error) {
	return strconv.FormatFloat(p.Value, 'g', -1, 64) + "%", nil
}
