package hub_test

import (
	"testing"

	"github.com/mcpgram/mcpgram"
)

// A blob resource a tool returns comes out decoded among the result's
// files, with its URI and type; text and images do not.
func TestResultFiles(t *testing.T) {
	h, _ := startHub(t, map[string]any{"echo": echoServer(t, nil)})
	res := call(t, h, "echo", "report", nil)
	files := res.Files()
	if len(files) != 1 {
		t.Fatalf("Files = %+v, want the one blob", files)
	}
	f := files[0]
	if f.Type != mcpgram.ContentResource || f.URI != "echo://reports/q3.csv" || f.MIMEType != "text/csv" || string(f.Data) != "a,b\n1,2\n" {
		t.Errorf("file = %+v", f)
	}
	if len(res.Images()) != 0 || res.Text() != "Your report:" {
		t.Errorf("images %d, text %q", len(res.Images()), res.Text())
	}
	if img := call(t, h, "echo", "image", nil); len(img.Files()) != 0 || len(img.Images()) != 1 {
		t.Errorf("an image result: files %d, images %d", len(img.Files()), len(img.Images()))
	}
}
