package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/compare"
	"github.com/ceiling-dev/ceiling/internal/metrics"
	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// shotOf is a report page for TestHTMLInChromium to open instead of the
// built-in find's: the demo's report.html, for the README's screenshot.
var shotOf = flag.String("page", "", "TestHTMLInChromium opens this report.html (with -update, its screenshot becomes docs/report.png)")

// The HTML report opened in headless Chromium: the page renders and its
// plots are drawn (the screenshot has plenty of non-white pixels below the
// table). The screenshot is kept as an artifact in $CEILING_ARTIFACTS, or in
// the test's temporary folder; with -update it becomes the README's
// docs/report.png:
//
//	ceiling demo --out /tmp/demo
//	go test ./internal/report -run TestHTMLInChromium -update -page /tmp/demo/report.html
//
// Skipped where Chromium is not installed (.ci/run installs it).
func TestHTMLInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
	}
	dir := t.TempDir()
	if a := os.Getenv("CEILING_ARTIFACTS"); a != "" {
		dir = a
		os.MkdirAll(dir, 0o755)
	}
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := HTML(&b, findSample()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if *shotOf != "" {
		if page, err = filepath.Abs(*shotOf); err != nil {
			t.Fatal(err)
		}
	}
	shot := filepath.Join(dir, "report.png")
	img := screenshot(t, bin, page, shot)
	if *update {
		png, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(filepath.Join("..", "..", "docs", "report.png"), png, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The plots sit below the title and the step table: count the drawn
	// (non-white) pixels in the lower part of the page.
	bounds := img.Bounds()
	lower := image.Rect(bounds.Min.X, bounds.Min.Y+bounds.Dy()/3, bounds.Max.X, bounds.Max.Y)
	if drawn, total := drawnIn(img, lower); drawn < total/50 {
		t.Errorf("only %d of %d sampled pixels drawn below the table: the plots did not render", drawn, total)
	}
}

// The compare page opened in headless Chromium: its plot is drawn (many
// non-white pixels in the band between the header and the table) and a
// worse row is shaded red. The screenshot is kept as TestHTMLInChromium
// keeps its own, as compare.png.
func TestCompareHTMLInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
	}
	dir := t.TempDir()
	if a := os.Getenv("CEILING_ARTIFACTS"); a != "" {
		dir = a
		os.MkdirAll(dir, 0o755)
	}
	levels := []float64{100, 200, 800}
	var b bytes.Buffer
	if err := CompareHTML(&b, compare.Compare(repeated(20, levels...), repeated(26, levels...), compare.Options{A: "a.json", B: "b.json", MinEffect: 5})); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "compare.html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	img := screenshot(t, bin, page, filepath.Join(dir, "compare.png"))
	// At a 1200 px wide window the plot spans roughly y 250 to 550.
	bounds := img.Bounds()
	band := image.Rect(bounds.Min.X, 250, bounds.Max.X, 550).Intersect(bounds)
	if drawn, total := drawnIn(img, band); drawn < total/50 {
		t.Errorf("only %d of %d sampled pixels drawn where the plot should be: it did not render", drawn, total)
	}
	var red int
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 == 0xfd && g>>8 == 0xe4 && bl>>8 == 0xe4 { // tr.worse's background
				red++
			}
		}
	}
	if red < 1000 {
		t.Errorf("%d sampled pixels of a worse row's shade, want the 9 worse rows shaded", red)
	}
}

// screenshot opens page in headless Chromium and returns its screenshot,
// written to shot.
func screenshot(t *testing.T, bin, page, shot string) image.Image {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--window-size=1200,1600",
		"--screenshot="+shot, "file://"+page)
	testkit.Group(t, cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
	return img
}

// drawnIn counts the non-white pixels of every other row and column of
// rect, and how many it sampled.
func drawnIn(img image.Image, rect image.Rectangle) (drawn, total int) {
	for y := rect.Min.Y; y < rect.Max.Y; y += 2 {
		for x := rect.Min.X; x < rect.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				drawn++
			}
		}
	}
	return drawn, (rect.Dx() / 2) * (rect.Dy() / 2)
}

// measureScript, appended to a page for TestHTMLTableIn1400px, measures
// each table box (.wide) once the page is laid out: its visible and its
// scrolled width, and where the right edges of its last two headings are.
// It writes them as JSON into a <pre id="measure"> that --dump-dom shows.
const measureScript = `<script>
addEventListener('load', () => {
  const out = [];
  document.querySelectorAll('.wide').forEach(d => {
    const th = d.querySelectorAll('th');
    const right = i => Math.round(th[i].getBoundingClientRect().right);
    out.push({client: d.clientWidth, scroll: d.scrollWidth, slo: right(th.length - 2), verdict: right(th.length - 1), window: innerWidth,
      heads: Array.from(th).map(h => h.textContent)});
  });
  const p = document.createElement('pre');
  p.id = 'measure';
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
});
</script>`

// The step table of a demo-like find (watched target, deliveries behind
// by their step's end, sockets, an OVERLOADED step with its reason) in
// headless Chromium at a 1400 px wide window: it does not scroll
// sideways, and its slo and verdict columns end inside the window. The
// table was 1440 px wide in a 1100 px box, slo and verdict behind a
// scrollbar.
func TestHTMLTableIn1400px(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium; .ci/run installs it)")
	}
	r := narrowSample()
	for i := range r.Steps {
		s := &r.Steps[i]
		s.Delivery.LatencyMS = metrics.Latency{P50: 684, P99: 1090}
		s.WebSocket.Wanted = 50
		s.Late, s.MaxLagMS = 12, 31.5
	}
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, bytes.Replace(b.Bytes(), []byte("</body>"), []byte(measureScript+"</body>"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--window-size=1400,1000", "--virtual-time-budget=2000",
		"--dump-dom", "file://"+page)
	testkit.Group(t, cmd)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`<pre id="measure">(.*?)</pre>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no measurement in the page Chromium laid out:\n%s", out)
	}
	var boxes []struct {
		Client, Scroll, SLO, Verdict, Window int
		Heads                                []string
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &boxes); err != nil {
		t.Fatal(err)
	}
	if len(boxes) == 0 || len(boxes[0].Heads) < 17 || boxes[0].Heads[len(boxes[0].Heads)-2] != "slo" {
		t.Fatalf("the first table is not the step table with every column: %+v", boxes)
	}
	step := boxes[0]
	t.Logf("the step table at a %d px window: %d px shown of %d, slo ends at %d px, verdict at %d px", step.Window, step.Client, step.Scroll, step.SLO, step.Verdict)
	if step.Scroll > step.Client {
		t.Errorf("the step table scrolls sideways: %d px wide in a %d px box", step.Scroll, step.Client)
	}
	if step.SLO > step.Window || step.Verdict > step.Window {
		t.Errorf("slo ends at %d px and verdict at %d px, past the %d px window", step.SLO, step.Verdict, step.Window)
	}
}
