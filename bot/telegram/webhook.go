package telegram

import (
	"context"
	"encoding/json"
	"fmt"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// SetWebhook registers url for updates of the allowed kinds, with secret
// as the X-Telegram-Bot-Api-Secret-Token Telegram sends back. One
// connection at a time keeps a chat's updates in order.
func (c *Client) SetWebhook(ctx context.Context, url, secret string, allowed []string) error {
	kinds, err := json.Marshal(allowed)
	if err != nil {
		return err
	}
	params := tgbotapi.Params{"url": url, "secret_token": secret, "max_connections": "1", "allowed_updates": string(kinds)}
	return c.retry(ctx, "setWebhook", func() error {
		_, err := c.api.MakeRequest("setWebhook", params)
		return err
	})
}

// A WebhookInfo is what getWebhookInfo says of deliveries.
type WebhookInfo struct {
	URL              string `json:"url"`
	PendingUpdates   int    `json:"pending_update_count"`
	LastErrorDate    int64  `json:"last_error_date"`
	LastErrorMessage string `json:"last_error_message"`
}

// GetWebhookInfo asks Telegram how deliveries to the webhook go, once.
func (c *Client) GetWebhookInfo(ctx context.Context) (WebhookInfo, error) {
	c.polls.set(ctx)
	var info WebhookInfo
	resp, err := c.poll.MakeRequest("getWebhookInfo", nil)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(resp.Result, &info); err != nil {
		return info, fmt.Errorf("decode webhook info: %w", err)
	}
	return info, nil
}
