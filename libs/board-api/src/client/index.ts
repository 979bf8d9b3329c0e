export * from './board-client.js';
export * from './detect.js';
export * from './dialects.js';
export * from './errors.js';
export {
  BOARD_BODY_LIMIT_BYTES,
  BodyTooLargeError,
  readBodyCapped,
  CERT_PIN_MISMATCH,
  CERT_PIN_UNSAVED,
  createBoardDispatcher,
  type CertificatePins,
  type DispatcherOptions,
  type WireResponse,
} from './transport.js';
export { STORED_READS, type StoredRead } from './exact-answers.js';
