import { enc, type RequestOptions, type Transport } from './transport.js';
import type { Webhook, WebhookDeliveryPage, WebhookDeliveryQuery, WebhookRequest } from './types.js';

/** Webhook configuration (tenant, conversation) and the delivery log. */
export function webhookMethods(t: Transport) {
  const conversationPath = (id: string) => `/v1/conversations/${enc(id)}/webhook`;
  return {
    /** `PUT /v1/webhook`: the tenant webhook; a new one without `secret` gets one, returned only here. */
    setWebhook: (body: WebhookRequest, opts: RequestOptions = {}) => t.put<Webhook>('/v1/webhook', body, opts),
    getWebhook: (opts: RequestOptions = {}) => t.get<Webhook>('/v1/webhook', undefined, opts),
    deleteWebhook: (opts: RequestOptions = {}) => t.remove('/v1/webhook', opts),
    /** `PUT /v1/conversations/:id/webhook`: the conversation's own webhook, which wins over the tenant's. */
    setConversationWebhook: (conversationId: string, body: WebhookRequest, opts: RequestOptions = {}) =>
      t.put<Webhook>(conversationPath(conversationId), body, opts),
    getConversationWebhook: (conversationId: string, opts: RequestOptions = {}) =>
      t.get<Webhook>(conversationPath(conversationId), undefined, opts),
    deleteConversationWebhook: (conversationId: string, opts: RequestOptions = {}) => t.remove(conversationPath(conversationId), opts),
    /** `GET /v1/webhooks/deliveries`: the delivery log, newest first, with every attempt. */
    listWebhookDeliveries: (query: WebhookDeliveryQuery = {}, opts: RequestOptions = {}) =>
      t.get<WebhookDeliveryPage>('/v1/webhooks/deliveries', query, opts),
  };
}
