/** The contract: wire types, their schemas and parsers, and the one error type. Pure: no engine, no DOM. */
export * from './errors.ts';
export * from './messages.ts';
export * from './limits.ts';
export * from './param-path.ts';
export * from './validation.ts';
export * from './body-bounds.ts';
export * from './keyed-record.ts';
export * from './state.ts';
export * from './question.ts';
export * from './canonical.ts';
export * from './calibration-profile.ts';
export * from './decision-request.ts';
export * from './decision-response.ts';
export * from './chat-message.ts';
export * from './chat-request.ts';
export * from './chat-response.ts';
export * from './models.ts';
