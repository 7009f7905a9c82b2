package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// PDFs are read as text with github.com/ledongthuc/pdf, a pure-Go reader
// (a maintained fork of rsc.io/pdf) that decodes the fonts' encodings and
// ToUnicode maps; pdfcpu, the other pure-Go library, extracts a page's
// drawing operators, not its text. A PDF is a program of sorts, and a
// hostile one can make a parser loop (a page tree that contains itself)
// or fill memory (a stream that inflates to gigabytes), which no deadline
// stops inside a process: a goroutine cannot be killed. So the text is
// read in a child process, the bot's own binary started again (see
// PDFMain):
// it gets the file on its standard input and nothing of the bot's
// environment, stops itself past PDFMemory of heap, and is killed past
// PDFTimeout. What it writes back is bounded too, and so is how many
// read at once (Reader.MaxPDFReaders).

// Bounds of reading a PDF.
const (
	// MaxPDFBytes is the largest PDF read: what the cloud Bot API lets a
	// bot download.
	MaxPDFBytes = 20 << 20
	// MaxPDFPages is how many pages are read, from the first.
	MaxPDFPages = 50
	// PDFTimeout is how long reading one may take.
	PDFTimeout = 20 * time.Second
	// PDFMemory is the heap the reader may use.
	PDFMemory = 256 << 20
)

// PDFArg, as a program's first argument, asks it for PDFMain: a hidden
// subcommand of mcpgram, and of the test binaries that read PDFs. The
// argument after it is the pages, the bytes of text and the bytes of
// heap the reader may take ("50:65536:268435456").
const PDFArg = "__mcpgram-pdf-text"

// PDFMain returns at once unless args (a program's os.Args) ask for it.
// When they do, it never returns: the process is the PDF reader readPDF
// starts, which reads the file on its stdin, writes its text as JSON on
// its stdout, and exits. A program that reads PDFs calls it first in
// main (a test binary, in TestMain), as it does confine.Main.
func PDFMain(args []string) {
	if len(args) != 3 || args[1] != PDFArg {
		return
	}
	os.Exit(pdfChild(args[2], os.Stdin, os.Stdout))
}

// A pdfText is what the reader sends back.
type pdfText struct {
	Text string `json:"text"`
	// Pages is how many the file has, Read how many were read.
	Pages int `json:"pages"`
	Read  int `json:"read"`
	// Cut says the text was longer than asked for, and was cut there.
	Cut bool `json:"cut"`
	// Problem, when set, is why there is no text: "encrypted" (a
	// password is needed), "encryption" (one the reader lacks),
	// "unreadable".
	Problem string `json:"problem,omitempty"`
}

// Why a PDF gave no text.
var (
	errPDFEncrypted  = errors.New("the PDF is encrypted")
	errPDFEncryption = errors.New("the PDF's encryption is not one the reader knows")
	errPDFUnreadable = errors.New("the PDF cannot be read")
)

// readPDF reads the text of data, at most pages pages and about maxText
// bytes of text, in a child process bounded in time and memory.
func readPDF(ctx context.Context, data []byte, pages, maxText int, timeout time.Duration, memory int) (pdfText, error) {
	self, err := os.Executable()
	if err != nil {
		return pdfText{}, fmt.Errorf("read a PDF: find the program to run: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, PDFArg, fmt.Sprintf("%d:%d:%d", pages, maxText, memory))
	cmd.Env = []string{"GOMAXPROCS=1"}
	if v, ok := os.LookupEnv("GORACE"); ok {
		// Read by race-enabled builds only (a test's, which is its own
		// reader): make test has them exit without a second's wait.
		cmd.Env = append(cmd.Env, "GORACE="+v)
	}
	cmd.Stdin = bytes.NewReader(data)
	// Each byte of text is at most 6 in JSON (\u0001).
	out := &capped{limit: 6*maxText + 4096}
	cmd.Stdout = out
	cmd.Stderr = &capped{limit: 4096}
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return pdfText{}, fmt.Errorf("read a PDF: %w: gave up after %s", errPDFUnreadable, timeout)
	}
	var got pdfText
	if jerr := json.Unmarshal(out.Bytes(), &got); jerr != nil || out.over {
		return pdfText{}, fmt.Errorf("read a PDF: %w: the reader failed (%v; %s)", errPDFUnreadable, err, cmd.Stderr)
	}
	switch got.Problem {
	case "":
	case "encrypted":
		return got, errPDFEncrypted
	case "encryption":
		return got, errPDFEncryption
	default:
		return got, fmt.Errorf("read a PDF: %w: %s", errPDFUnreadable, got.Problem)
	}
	if !utf8.ValidString(got.Text) {
		got.Text = strings.ToValidUTF8(got.Text, "\uFFFD")
	}
	return got, nil
}

// A capped buffer keeps the first limit bytes written to it, and says
// whether more came.
type capped struct {
	bytes.Buffer
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.Len(); len(p) > room {
		c.over = true
		p = p[:max(room, 0)]
	}
	c.Buffer.Write(p)
	return len(p), nil
}

// pdfChild is the reader's whole life: the file from in, the text as
// JSON to out; its exit code.
func pdfChild(spec string, in io.Reader, out io.Writer) int {
	pages, maxText, memory := MaxPDFPages, 64<<10, PDFMemory
	if f := strings.Split(spec, ":"); len(f) == 3 {
		pages, _ = strconv.Atoi(f[0])
		maxText, _ = strconv.Atoi(f[1])
		memory, _ = strconv.Atoi(f[2])
	}
	debug.SetMemoryLimit(int64(memory) / 2)
	// Objects nested without end would grow the stack to Go's 1 GB before
	// failing: fail at a size any real file stays far below.
	debug.SetMaxStack(64 << 20)
	go watchMemory(uint64(memory))
	data, err := io.ReadAll(io.LimitReader(in, MaxPDFBytes+1))
	res := pdfText{Problem: "unreadable"}
	if err == nil && len(data) <= MaxPDFBytes {
		res = extractPDF(data, pages, maxText)
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return 1
	}
	return 0
}

// watchMemory ends the process once its heap passes limit: a PDF built
// to fill memory fails, rather than the machine.
func watchMemory(limit uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > limit {
			fmt.Fprintln(os.Stderr, "the PDF needs more memory than allowed")
			os.Exit(3)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// extractPDF reads the text of up to pages pages of data, stopping once
// it has more than maxText bytes.
func extractPDF(data []byte, pages, maxText int) (res pdfText) {
	defer func() {
		if p := recover(); p != nil {
			res = pdfText{Problem: "unreadable"}
		}
	}()
	data = tidyPDF(data)
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return pdfText{Problem: "encrypted"}
	case err != nil && strings.Contains(err.Error(), "encryption"):
		return pdfText{Problem: "encryption"}
	case err != nil:
		return pdfText{Problem: "unreadable"}
	}
	tree := r.Trailer().Key("Root").Key("Pages")
	found, complete := pageList(tree, pages+1)
	if len(found) == 0 {
		return pdfText{Problem: "unreadable"}
	}
	// The count the file declares is taken only when it is not
	// contradicted: a hostile one says a billion pages and holds two.
	res.Pages = len(found)
	if !complete || len(found) > pages {
		res.Pages = max(int(min(tree.Key("Count").Int64(), 1<<30)), len(found))
	}
	var b strings.Builder
	for i, p := range found[:min(len(found), pages)] {
		res.Read = i + 1
		text, ok := pageText(p, maxText-b.Len()+1)
		if !ok && len(found) == 1 {
			return pdfText{Problem: "unreadable"}
		}
		if b.Len() > 0 && text != "" {
			b.WriteString("\n\n")
		}
		b.WriteString(text)
		if b.Len() > maxText {
			res.Cut = true
			break
		}
	}
	res.Text = b.String()
	if res.Cut {
		res.Text = cutUTF8(res.Text, maxText)
	}
	return res
}

// tidyPDF mends two things common in files that open elsewhere and that
// the reader refuses: a PDF 2.0 header (its syntax is 1.7's), and bytes
// after the last %%EOF.
func tidyPDF(data []byte) []byte {
	if bytes.HasPrefix(data, []byte("%PDF-2.0")) {
		data = append([]byte("%PDF-1.7"), data[len("%PDF-2.0"):]...)
	}
	if i := bytes.LastIndex(data, []byte("%%EOF")); i >= 0 && i >= len(data)-1024 {
		data = data[:i+len("%%EOF")]
	}
	return data
}

// A pdfPage is a page and the resources it inherits.
type pdfPage struct {
	v, resources pdf.Value
}

// Bounds of walking a page tree: real ones are a few levels deep, and a
// hostile one may contain itself. MaxPageTreeDepth is the deepest level
// read.
const (
	MaxPageTreeDepth = 32
	maxTreeNodes     = 20000
)

// pageList walks the page tree from root, in order, to the first limit
// pages; complete says the walk ended at the tree's end, not at limit or
// at a bound of the walk.
func pageList(root pdf.Value, limit int) (pages []pdfPage, complete bool) {
	type node struct {
		v, resources pdf.Value
		depth        int
	}
	stack := []node{{root, root.Key("Resources"), 0}}
	for visited := 0; len(stack) > 0; visited++ {
		if len(pages) == limit || visited == maxTreeNodes {
			return pages, false
		}
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if res := n.v.Key("Resources"); !res.IsNull() {
			n.resources = res
		}
		kids := n.v.Key("Kids")
		if n.v.Key("Type").Name() == "Page" || (kids.IsNull() && !n.v.Key("Contents").IsNull()) {
			pages = append(pages, pdfPage{n.v, n.resources})
			continue
		}
		if n.depth == MaxPageTreeDepth {
			return pages, false
		}
		for i := min(kids.Len(), maxTreeNodes) - 1; i >= 0; i-- {
			stack = append(stack, node{kids.Index(i), n.resources, n.depth + 1})
		}
	}
	return pages, true
}

// cutUTF8 cuts s to at most n bytes, at a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// errEnough stops reading a page that has given all the text wanted.
var errEnough = errors.New("enough text")

// pageText reads the text a page shows, in the order it is drawn: a new
// line where the text moves down, a space where it moves right or a
// glyph positioning leaves a gap; it stops once it has more than limit
// bytes. ok is false if the page could not be read (what was read before
// the trouble is kept).
func pageText(p pdfPage, limit int) (text string, ok bool) {
	var b strings.Builder
	defer func() {
		if r := recover(); r != nil {
			text, ok = strings.TrimSpace(b.String()), r == errEnough
		}
	}()
	if p.v.Key("Contents").IsNull() {
		return "", true
	}
	fonts := map[string]pdf.TextEncoding{}
	var enc pdf.TextEncoding
	show := func(raw string) {
		if enc != nil {
			raw = enc.Decode(raw)
		}
		b.WriteString(raw)
		if b.Len() > limit {
			panic(errEnough)
		}
	}
	newline := func() {
		if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
	}
	space := func() {
		if s := b.String(); s != "" && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\n") {
			b.WriteByte(' ')
		}
	}
	pdf.Interpret(p.v.Key("Contents"), func(stk *pdf.Stack, op string) {
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		arg := func(i int) pdf.Value {
			if i < len(args) {
				return args[i]
			}
			return pdf.Value{}
		}
		switch op {
		case "BT", "T*":
			newline()
		case "Tf":
			name := arg(0).Name()
			if _, ok := fonts[name]; !ok {
				f := pdf.Font{V: p.resources.Key("Font").Key(name)}
				fonts[name] = f.Encoder()
			}
			enc = fonts[name]
		case "Td", "TD":
			if arg(1).Float64() != 0 {
				newline()
			} else if arg(0).Float64() > 0 {
				space()
			}
		case "Tm":
			space()
		case "'", "\"":
			newline()
			show(arg(len(args) - 1).RawString())
		case "Tj":
			show(arg(0).RawString())
		case "TJ":
			v := arg(0)
			for i := 0; i < v.Len(); i++ {
				x := v.Index(i)
				if x.Kind() == pdf.String {
					show(x.RawString())
				} else if x.Float64() < -200 {
					// A gap of a fifth of the font's size reads as a space.
					space()
				}
			}
		}
	})
	return strings.TrimSpace(b.String()), true
}
