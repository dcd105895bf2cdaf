/**
 * JSON with every non-ASCII character escaped. SQS rejects some code points (U+FFFE, U+FFFF), and
 * SNS delivers raw messages into SQS, so events and jobs travel escaped; escaped JSON parses back
 * to the same value everywhere.
 */
export const asciiJson = (value: unknown) =>
  JSON.stringify(value).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
