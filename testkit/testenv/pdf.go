package testenv

import (
	"bytes"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"fmt"
	"strings"
)

// PDFFile assembles a PDF from the bodies of its objects (the text
// between "N 0 obj" and "endobj"), numbered from 1, object 1 the
// catalog, with a correct cross-reference table and trailer: the tests'
// PDFs are written here, by hand, not brought in as files.
func PDFFile(objects ...string) []byte {
	return pdfFile(objects, "")
}

// pdfFile is PDFFile with more entries for the trailer.
func pdfFile(objects []string, trailer string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, trailer, xref)
	return b.Bytes()
}

// PDFStream is the body of a stream object holding data.
func PDFStream(data string) string {
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(data), data)
}

// PDF makes a PDF of pages of text in Helvetica (one of the fonts every
// reader has), each line of a page a line of text.
func PDF(pages ...string) []byte {
	return PDFFile(pdfPages(pages, func(_ int, data string) string { return data })...)
}

// pdfPages are the objects of a PDF of pages of text, each content
// stream's data passed through seal with its object's number.
func pdfPages(pages []string, seal func(obj int, data string) string) []string {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
	var kids []string
	for _, page := range pages {
		n := len(objs) + 1
		kids = append(kids, fmt.Sprintf("%d 0 R", n))
		var content strings.Builder
		content.WriteString("BT /F1 12 Tf 14 TL 72 720 Td")
		for i, line := range strings.Split(page, "\n") {
			if i > 0 {
				content.WriteString(" T*")
			}
			fmt.Fprintf(&content, " (%s) Tj", pdfEscape(line))
		}
		content.WriteString(" ET")
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", n+1),
			PDFStream(seal(n+1, content.String())))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages))
	return objs
}

// EncryptedPDF is PDF's file encrypted as PDF's standard security
// handler does it (revision 3: RC4 with a 128-bit key, PDF 32000-1
// §7.6.3): with an empty user password any reader opens it (the owner's
// password only restricts what it may do), with another it asks for it.
func EncryptedPDF(userPassword string, pages ...string) []byte {
	id := md5.Sum([]byte("mcpgram test " + userPassword))
	const perms = -3904 // print and copy allowed; bits 13-32 set as the spec asks
	o := pdfOwnerEntry("owner secret", userPassword)
	key := pdfFileKey(userPassword, o, perms, id[:])
	objs := pdfPages(pages, func(obj int, data string) string {
		return string(rc4XOR(pdfObjectKey(key, obj), []byte(data)))
	})
	u := pdfUserEntry(key, id[:])
	objs = append(objs, fmt.Sprintf("<< /Filter /Standard /V 2 /R 3 /Length 128 /O <%x> /U <%x> /P %d >>", o, u, perms))
	return pdfFile(objs, fmt.Sprintf(" /Encrypt %d 0 R /ID [<%x> <%x>]", len(objs), id, id))
}

// pdfPad is the padding of passwords, from PDF 32000-1 §7.6.3.3.
var pdfPad = []byte{
	0x28, 0xbf, 0x4e, 0x5e, 0x4e, 0x75, 0x8a, 0x41, 0x64, 0x00, 0x4e, 0x56, 0xff, 0xfa, 0x01, 0x08,
	0x2e, 0x2e, 0x00, 0xb6, 0xd0, 0x68, 0x3e, 0x80, 0x2f, 0x0c, 0xa9, 0xfe, 0x64, 0x53, 0x69, 0x7a,
}

// padded is a password cut or padded to 32 bytes.
func padded(pw string) []byte {
	return append([]byte(pw[:min(len(pw), 32)]), pdfPad[:32-min(len(pw), 32)]...)
}

// md5x50 is an MD5 sum hashed again 50 times, as revision 3 asks.
func md5x50(data []byte) []byte {
	sum := md5.Sum(data)
	for range 50 {
		sum = md5.Sum(sum[:])
	}
	return sum[:]
}

// pdfOwnerEntry is the /O entry (algorithm 3).
func pdfOwnerEntry(owner, user string) []byte {
	return rc4Rounds(md5x50(padded(owner)), padded(user))
}

// pdfFileKey is the file's key (algorithm 2).
func pdfFileKey(user string, o []byte, perms int32, id []byte) []byte {
	in := append(padded(user), o...)
	in = binary.LittleEndian.AppendUint32(in, uint32(perms))
	return md5x50(append(in, id...))
}

// pdfUserEntry is the /U entry (algorithm 5).
func pdfUserEntry(key, id []byte) []byte {
	sum := md5.Sum(append(append([]byte{}, pdfPad...), id...))
	return append(rc4Rounds(key, sum[:]), make([]byte, 16)...)
}

// rc4Rounds encrypts data with key, then 19 times more with key's bytes
// XORed with the round's number.
func rc4Rounds(key, data []byte) []byte {
	out := rc4XOR(key, data)
	for i := 1; i <= 19; i++ {
		k := make([]byte, len(key))
		for j := range key {
			k[j] = key[j] ^ byte(i)
		}
		out = rc4XOR(k, out)
	}
	return out
}

// pdfObjectKey is the key of one object's strings and streams
// (algorithm 1), generation 0.
func pdfObjectKey(key []byte, obj int) []byte {
	sum := md5.Sum(append(append([]byte{}, key...), byte(obj), byte(obj>>8), byte(obj>>16), 0, 0))
	return sum[:]
}

func rc4XOR(key, data []byte) []byte {
	c, err := rc4.NewCipher(key)
	if err != nil {
		panic(err)
	}
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out
}

// pdfEscape escapes text for a PDF string.
func pdfEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`).Replace(s)
}
