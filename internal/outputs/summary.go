package outputs

import (
	"bytes"
	"fmt"
	"os"

	"github.com/ceiling-dev/ceiling/internal/report"
	"github.com/ceiling-dev/ceiling/internal/results"
)

// StepSummaryEnv names the environment variable through which GitHub
// Actions gives a job step the file whose Markdown it shows on the run's
// summary page.
const StepSummaryEnv = "GITHUB_STEP_SUMMARY"

// AppendStepSummary appends the run's Markdown report (report.Markdown),
// followed by a blank line, to the file $GITHUB_STEP_SUMMARY names,
// creating it if need be; when the variable is unset or empty (not in
// GitHub Actions) it does nothing. The report is rendered whole before the
// file is opened, so that a failed rendering leaves the file as it was,
// and written in one call, so that it lands in one piece.
func AppendStepSummary(res *results.Result) error {
	path := os.Getenv(StepSummaryEnv)
	if path == "" {
		return nil
	}
	var b bytes.Buffer
	if err := report.Markdown(&b, res); err != nil {
		return fmt.Errorf("render step summary: %w", err)
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
		b.WriteString("\n")
	}
	b.WriteString("\n") // a blank line before what comes next
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open step summary $%s: %w", StepSummaryEnv, err)
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append step summary to %s: %w", path, err)
	}
	return nil
}
