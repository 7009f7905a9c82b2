package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
)

// Notes the model reads in place of n images it does not get.
func noteImagesGone(n int) string { return imagesNote(n, "no longer kept") }

func noteImagesBlind(n int) string {
	return imagesNote(n, "not shown: this model does not see images")
}

func noteImagesDropped(n int) string {
	return imagesNote(n, "left out to keep within the context budget")
}

func imagesNote(n int, why string) string {
	if n == 1 {
		return "[An image sent here is " + why + ".]"
	}
	return fmt.Sprintf("[%d images sent here are %s.]", n, why)
}

func withNote(content, note string) string {
	if content == "" {
		return note
	}
	return content + "\n\n" + note
}

// keepImages stores the images of the user's message and returns their
// references for the stored message, also where this chat's model does
// not see images: the chat may switch to one that does.
func (t *turn) keepImages(ctx context.Context, imgs []llm.Image) ([]string, error) {
	if len(imgs) == 0 {
		return nil, nil
	}
	refs := make([]string, 0, len(imgs))
	for _, img := range imgs {
		ref, err := t.a.cfg.Store.MediaPut(ctx, img.MIMEType, img.Data)
		if err != nil {
			return nil, fmt.Errorf("keep the user's image: %w", err)
		}
		refs = append(refs, ref)
		t.cacheImage(ref, img)
	}
	return refs, nil
}

func (t *turn) cacheImage(ref string, img llm.Image) {
	if t.media == nil {
		t.media = map[string]llm.Image{}
	}
	t.media[ref] = img
}

// withImages is the part of history one model call sends, the part that
// fits the budget beside the system prompt sys, with the images each of
// its messages names. An image no longer kept, or one the model cannot
// see, is a note instead.
func (t *turn) withImages(ctx context.Context, sys string, history []store.Message) ([]store.Message, [][]llm.Image) {
	vision := t.profile.Vision
	kept := fit(history, t.profile.ContextTokens, estimate(sys), vision)
	var images [][]llm.Image // made at the first image: most histories have none
	cloned := false
	note := func(i int, text string) {
		if !cloned { // kept may share history's array: notes stay out of it
			kept, cloned = slices.Clone(kept), true
		}
		kept[i].Content = withNote(kept[i].Content, text)
	}
	for i, m := range kept {
		if len(m.Media) == 0 {
			continue
		}
		if !vision {
			note(i, noteImagesBlind(len(m.Media)))
			continue
		}
		gone := 0
		for _, ref := range m.Media {
			if img, ok := t.image(ctx, ref); ok {
				if images == nil {
					images = make([][]llm.Image, len(kept))
				}
				images[i] = append(images[i], img)
			} else {
				gone++
			}
		}
		if gone > 0 {
			note(i, noteImagesGone(gone))
		}
	}
	return kept, images
}

// image returns the image ref names, from the turn's cache or the store;
// ok is false when it is no longer kept (or cannot be read, which is
// logged).
func (t *turn) image(ctx context.Context, ref string) (llm.Image, bool) {
	if img, ok := t.media[ref]; ok {
		return img, true
	}
	m, err := t.a.cfg.Store.MediaGet(ctx, ref)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			t.logger.Error("read a kept image", "ref", ref, "err", err)
		}
		return llm.Image{}, false
	}
	img := llm.Image{MIMEType: m.MIMEType, Data: m.Data}
	t.cacheImage(ref, img)
	return img, true
}
