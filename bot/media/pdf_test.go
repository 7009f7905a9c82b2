package media_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/media"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

func pdfMessage(name, caption string, size int) *tgbotapi.Message {
	return &tgbotapi.Message{Chat: &tgbotapi.Chat{ID: 1}, Caption: caption,
		Document: &tgbotapi.Document{FileID: "f", FileName: name, MimeType: "application/pdf", FileSize: size}}
}

// deflated is data compressed as a PDF's FlateDecode stream.
func deflated(t *testing.T, data []byte, params string) string {
	t.Helper()
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return fmt.Sprintf("<< /Length %d /Filter /FlateDecode%s >>\nstream\n%s\nendstream", b.Len(), params, b.String())
}

// Hostile PDFs, each written for one way of making a reader loop, fill
// memory or fail.
func hostilePDFs(t *testing.T) map[string][]byte {
	t.Helper()
	catalog, font := "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
	page := func(contents string) string {
		return "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents " + contents + " >>"
	}
	// A page tree 100 levels deep, each level one kid.
	deep := []string{catalog, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>"}
	for i := 3; i < 103; i++ {
		deep = append(deep, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", i+1))
	}
	deep = append(deep, "<< /Type /Page /Contents 104 0 R >>", testenv.PDFStream("BT (deep) Tj ET"))
	// A content stream that draws nothing, named 20,000 times by its
	// page: gigabytes to interpret, in a file of 220 KB.
	refs := strings.Repeat("3 0 R ", 20000)
	return map[string][]byte{
		"loop":      testenv.PDFFile(catalog, "<< /Type /Pages /Kids [2 0 R] /Count 3 >>"),
		"deep tree": testenv.PDFFile(deep...),
		"nested arrays": testenv.PDFFile(catalog, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Contents 4 0 R /Resources "+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+" >>",
			testenv.PDFStream("BT (x) Tj ET")),
		"billion pages": testenv.PDFFile(catalog, "<< /Type /Pages /Kids [5 0 R 6 0 R] /Count 1000000000 >>",
			testenv.PDFStream("BT /F1 12 Tf (one of two) Tj ET"), font, page("3 0 R"), page("3 0 R")),
		// Numbers read into memory at several times their size in the file.
		"bomb": testenv.PDFFile(catalog, "<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
			testenv.PDFStream("BT /F1 12 Tf ["+strings.Repeat("1000 ", 3<<20)+"] TJ ET"), font, page("3 0 R")),
		// A stream whose rows, its parameters say, are 256 MB wide.
		"wide rows": testenv.PDFFile(catalog, "<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
			deflated(t, []byte("BT /F1 12 Tf (x) Tj ET"), " /DecodeParms << /Predictor 12 /Columns 268435456 >>"), font, page("3 0 R")),
		"endless content": testenv.PDFFile(catalog, "<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
			testenv.PDFStream(strings.Repeat("q Q ", 25000)), font, page("["+refs+"]")),
	}
}

// A PDF sent as a document is read as text: its pages in order, fenced,
// with its name and the caption; bounded in pages and in text, the user
// told what was left out; one that cannot be read (damaged, encrypted,
// scanned, hostile) gets a plain sentence, and a hostile one neither
// hangs nor fills memory.
func TestReadPDF(t *testing.T) {
	many := make([]string, 60)
	for i := range many {
		many[i] = fmt.Sprintf("Page %d says hello, and then says it again at some length.", i+1)
	}
	font := "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
	tj := testenv.PDFFile("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
		testenv.PDFStream("BT /F1 12 Tf [(Two)-300(words)-250(\\(and\\))] TJ 0 -14 Td (next line) Tj ET"), font,
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents 3 0 R >>")
	scanned := testenv.PDFFile("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
		testenv.PDFStream("q 100 0 0 100 0 0 cm Q"), "<< /Type /Page /Parent 2 0 R /Contents 3 0 R >>")
	// A file of PDF 2.0, and one with bytes after its end, as some
	// programs write them.
	v2 := bytes.Replace(testenv.PDF("Version two."), []byte("%PDF-1.4"), []byte("%PDF-2.0"), 1)
	trailing := append(testenv.PDF("Trailing bytes."), "\n\x00\x00 some garbage after the end\n"...)
	// AES-256 (revision 6), which the reader lacks: the same file with
	// another revision in its encryption dictionary.
	aes := bytes.Replace(testenv.EncryptedPDF("", "x"), []byte("/V 2 /R 3"), []byte("/V 5 /R 6"), 1)
	hostile := hostilePDFs(t)
	const unreadable = "I could not read that PDF"
	tests := []struct {
		name    string
		data    []byte
		caption string
		max     int
		want    []string // in Text, or in Problem when problem
		notice  string
		problem bool
		log     string // why, in the log
	}{
		{"two pages", testenv.PDF("Hello, world.\nSecond line (with parens).", "Page two: 25 * 48"), "Summarise this", 0,
			[]string{"Summarise this\n\nThe user sent the PDF \"report.pdf\" (2 pages); its text:\n```\nHello, world.\nSecond line (with parens).\n\nPage two: 25 * 48\n```"}, "", false, ""},
		{"gaps and lines", tj, "", 0, []string{"Two words (and)\nnext line"}, "", false, ""},
		{"too many pages", testenv.PDF(many...), "", 0, []string{"(60 pages); the text of its first 50 pages:", "Page 50 says hello", "again at some length.\n```"}, "(I read the first 50 of that PDF's 60 pages.)", false, ""},
		{"too much text", testenv.PDF(many...), "", 2048, []string{"(60 pages); the first 2 KB of its text:", "Page 1 says hello", "Page 34 says"}, "(That PDF's text is long: I read its first 2 KB, up to page 35 of 60.)", false, ""},
		{"PDF 2.0", v2, "", 0, []string{"Version two."}, "", false, ""},
		{"bytes after the end", trailing, "", 0, []string{"Trailing bytes."}, "", false, ""},
		{"encrypted, no password to open", testenv.EncryptedPDF("", "Only the owner may print.", "Page two."), "", 0,
			[]string{"(2 pages); its text:\n```\nOnly the owner may print.\n\nPage two.\n```"}, "", false, ""},
		{"encrypted with a password", testenv.EncryptedPDF("secret", "Hidden."), "", 0, []string{"protected with a password"}, "", true, ""},
		{"encrypted with AES-256", aes, "", 0, []string{"encrypted in a way I cannot read"}, "", true, ""},
		{"no text", scanned, "", 0, []string{"no text I can read"}, "", true, ""},
		{"not a PDF", []byte("hello, I am a PDF"), "", 0, []string{"not a PDF I can read"}, "", true, ""},
		{"damaged", append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("garbage "), 100)...), "", 0, []string{unreadable}, "", true, ""},
		{"a page tree that contains itself", hostile["loop"], "", 0, []string{unreadable}, "", true, "unreadable"},
		{"a page tree 100 levels deep", hostile["deep tree"], "", 0, []string{unreadable}, "", true, "unreadable"},
		{"arrays nested 100,000 deep", hostile["nested arrays"], "", 0, []string{unreadable}, "", true, ""},
		{"a billion pages declared, two there", hostile["billion pages"], "", 0, []string{"(2 pages); its text:\n```\none of two\n\none of two\n```"}, "", false, ""},
		{"a stream that fills memory", hostile["bomb"], "", 0, []string{unreadable}, "", true, "needs more memory than allowed"},
		{"a stream of rows 256 MB wide", hostile["wide rows"], "", 0, []string{unreadable}, "", true, ""},
		{"content without end", hostile["endless content"], "", 0, []string{unreadable}, "", true, "gave up after 5s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			// A bound, not a goal: a race-built reader starting on a loaded
			// machine was seen to take over 5 s. The endless one is given
			// 5 s to see it given up.
			r := &media.Reader{Files: files{"f": tt.data}, MaxDocument: 64 << 10, PDFTimeout: 30 * time.Second, PDFMemory: 32 << 20,
				Logger: slog.New(slog.NewTextHandler(&log, nil))}
			if strings.Contains(tt.log, "gave up") {
				r.PDFTimeout = 5 * time.Second
			}
			if strings.Contains(tt.log, "memory") {
				// Time enough to fill it under -race on a loaded machine.
				r.PDFTimeout = time.Minute
			}
			if tt.max > 0 {
				r.MaxDocument = tt.max
			}
			res, ok := r.Read(t.Context(), pdfMessage("report.pdf", tt.caption, len(tt.data)))
			if !ok {
				t.Fatal("a PDF was not read as a document")
			}
			got := res.Text
			if tt.problem {
				got = res.Problem
			} else if res.Problem != "" {
				t.Fatalf("problem %q", res.Problem)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q\nwant it to contain %q", got, w)
				}
			}
			if res.Notice != tt.notice {
				t.Errorf("notice %q, want %q", res.Notice, tt.notice)
			}
			if !strings.Contains(log.String(), tt.log) {
				t.Errorf("log %q, want it to say %q", log.String(), tt.log)
			}
			if tt.max > 0 && len(res.Text) > tt.max+200 {
				t.Errorf("text of %d bytes, over the bound of %d", len(res.Text), tt.max)
			}
		})
	}
}

// A PDF over 20 MB is refused by the size Telegram reports, before it is
// downloaded.
func TestPDFTooLarge(t *testing.T) {
	r := &media.Reader{Files: downloads{}, MaxDocument: 64 << 10, Logger: slog.New(slog.DiscardHandler)}
	res, _ := r.Read(t.Context(), pdfMessage("big.pdf", "", media.MaxPDFBytes+1))
	if !strings.Contains(res.Problem, "too large for me: I read PDFs of up to 20 MB") {
		t.Errorf("problem %q", res.Problem)
	}
}

// At most MaxPDFReaders PDFs are read at once, by default as many as
// there are CPUs: the others wait for a turn and are read once one ends.
// Every reader is held at the start of its turn, so the count of those
// holding a turn is exactly how many would be reading.
func TestPDFReadersBounded(t *testing.T) {
	t.Parallel()
	limit := runtime.NumCPU()
	pdfs := limit + 2
	data := testenv.PDF("Hello, world.")
	r := &media.Reader{Files: files{"f": data}, MaxDocument: 64 << 10, Logger: slog.New(slog.DiscardHandler)}
	events := make(chan string, 2*pdfs)
	release := make(chan struct{})
	media.SetPDFHooks(r, func() { events <- "wait" }, func() {
		events <- "read"
		<-release
	})
	results := make(chan media.Result, pdfs)
	for range pdfs {
		go func() {
			res, _ := r.Read(t.Context(), pdfMessage("x.pdf", "", len(data)))
			results <- res
		}()
	}
	got := map[string]int{}
	for range pdfs { // each PDF either reads or waits, then stays put
		got[await(t, events, "turn or wait")]++
	}
	if got["read"] != limit || got["wait"] != pdfs-limit {
		t.Errorf("%d PDFs at once with %d CPUs: %d reading, %d waiting; want %d reading", pdfs, limit, got["read"], got["wait"], limit)
	}
	close(release)
	for range pdfs {
		if res := await(t, results, "result"); !strings.Contains(res.Text, "Hello, world.") {
			t.Errorf("text %q, problem %q; want every PDF read in turn", res.Text, res.Problem)
		}
	}
	close(events)
	for e := range events { // the waiters' turns
		got[e]++
	}
	if got["read"] != pdfs {
		t.Errorf("%d turns for %d PDFs, want one each", got["read"], pdfs)
	}
}

// await receives from ch, failing t if nothing comes within 30 s.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30 s", what)
		panic("unreachable")
	}
}

// A PDF waiting for a reader's turn stops waiting when its context ends,
// with a sentence, unread; MaxPDFReaders sets the bound.
func TestPDFWaitCancelled(t *testing.T) {
	t.Parallel()
	data := testenv.PDF("Hello, world.")
	r := &media.Reader{Files: files{"f": data}, MaxDocument: 64 << 10, MaxPDFReaders: 1, Logger: slog.New(slog.DiscardHandler)}
	waiting, reading := make(chan struct{}, 2), make(chan struct{}, 2)
	release := make(chan struct{})
	media.SetPDFHooks(r, func() { waiting <- struct{}{} }, func() {
		reading <- struct{}{}
		<-release
	})
	first := make(chan media.Result, 1)
	go func() {
		res, _ := r.Read(t.Context(), pdfMessage("x.pdf", "", len(data)))
		first <- res
	}()
	await(t, reading, "turn")
	ctx, cancel := context.WithCancel(t.Context())
	second := make(chan media.Result, 1)
	go func() {
		res, _ := r.Read(ctx, pdfMessage("x.pdf", "", len(data)))
		second <- res
	}()
	await(t, waiting, "wait")
	cancel()
	res := await(t, second, "result")
	if res.Text != "" || !strings.Contains(res.Problem, "I stopped before reading that PDF") {
		t.Errorf("cancelled while waiting: text %q, problem %q; want the sentence, no text", res.Text, res.Problem)
	}
	if len(reading) != 0 {
		t.Error("the cancelled PDF got a turn")
	}
	close(release)
	if res := await(t, first, "result"); !strings.Contains(res.Text, "Hello, world.") {
		t.Errorf("the first PDF: text %q, problem %q", res.Text, res.Problem)
	}
}

// downloads fails every download: a test that reaches one fails.
type downloads struct{}

func (downloads) Download(context.Context, string, int64) ([]byte, string, error) {
	panic("downloaded a file it should have refused")
}

// FuzzPDF: whatever the bytes, reading them as a PDF ends within its
// bound, without taking the process down, with valid UTF-8 text within
// the bound, or a sentence for the user.
func FuzzPDF(f *testing.F) {
	f.Add(testenv.PDF("Hello, world.", "Second page"))
	f.Add(testenv.PDFFile("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		testenv.PDFStream("BT /F1 12 Tf [(Two)-300(words)] TJ 0 -14 Td (next) Tj T* (x) ' ET"),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"))
	f.Add([]byte("%PDF-1.7\n1 0 obj << >> endobj trailer << /Root 1 0 R >>"))
	f.Add(testenv.EncryptedPDF("", "Encrypted, no password to open."))
	// A short deadline: inputs that make the parser loop are common, and
	// each waits it out.
	r := &media.Reader{MaxDocument: 4096, PDFTimeout: time.Second, PDFMemory: 64 << 20, Logger: slog.New(slog.DiscardHandler)}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Most mutations of a file's start would stop at the check of its
		// header, before the reader: give them one.
		if !bytes.HasPrefix(data, []byte("%PDF-1.")) {
			data = append([]byte("%PDF-1.7\n"), data...)
		}
		r.Files = files{"f": data}
		start := time.Now()
		res, _ := r.Read(t.Context(), pdfMessage("x.pdf", "", len(data)))
		if el := time.Since(start); el > 5*time.Second {
			t.Fatalf("reading took %v", el)
		}
		if (res.Text == "") == (res.Problem == "") {
			t.Fatalf("text %q and problem %q: want exactly one", res.Text, res.Problem)
		}
		if !utf8.ValidString(res.Text) || len(res.Text) > 4096+200 {
			t.Fatalf("text of %d bytes, valid UTF-8: %v", len(res.Text), utf8.ValidString(res.Text))
		}
	})
}

// BenchmarkReadPDF: what reading a small PDF costs, the child process
// included.
func BenchmarkReadPDF(b *testing.B) {
	data := testenv.PDF("Hello, world.", "Second page", "Third page")
	r := &media.Reader{Files: files{"f": data}, MaxDocument: 64 << 10, Logger: slog.New(slog.DiscardHandler)}
	for b.Loop() {
		if res, _ := r.Read(b.Context(), pdfMessage("x.pdf", "", len(data))); res.Problem != "" {
			b.Fatal(res.Problem)
		}
	}
}
