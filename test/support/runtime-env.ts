import { inject } from 'vitest';

// Integration tests import handler and domain modules directly; they must see the same stand-ins
// as the runtime, and modules read their settings at import time.
Object.assign(process.env, inject('runtime').env);
