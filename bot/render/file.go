package render

import (
	"mime"
	"net/url"
	"path"

	"github.com/mcpgram/mcpgram"
)

// FileName names a file a tool returned: the last part of its URI, or
// "file" with an extension for its type. What would hide part of the
// name or reverse it shows (Visible): the name is what the user
// judges the file by.
func FileName(c mcpgram.Content) string {
	if u, err := url.Parse(c.URI); err == nil {
		if name := path.Base(u.Path); name != "" && name != "/" && name != "." && len(name) <= 64 {
			return Visible(name)
		}
	}
	if exts, _ := mime.ExtensionsByType(c.MIMEType); len(exts) > 0 {
		return "file" + exts[0]
	}
	return "file"
}
