import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BINARY_TEXT_LANGUAGE, isMlirTakenForBinary } from '../../src/binaryText';

test('an .mlir file VS Code opened as binary text is claimed; other files and languages are not', () => {
  assert.equal(isMlirTakenForBinary(BINARY_TEXT_LANGUAGE, '/ws/model.mlir'), true);
  assert.equal(isMlirTakenForBinary(BINARY_TEXT_LANGUAGE, '/ws/MODEL.MLIR'), true);
  assert.equal(isMlirTakenForBinary(BINARY_TEXT_LANGUAGE, '/ws/data.bin'), false);
  assert.equal(isMlirTakenForBinary(BINARY_TEXT_LANGUAGE, '/ws/model.mlir.bak'), false);
  assert.equal(isMlirTakenForBinary('mlir', '/ws/model.mlir'), false);          // already MLIR
  assert.equal(isMlirTakenForBinary('plaintext', '/ws/model.mlir'), false);     // the user's own choice
  // A .mlirbc file has an editor of its own (src/bytecode/), which reads its bytes.
  assert.equal(isMlirTakenForBinary(BINARY_TEXT_LANGUAGE, '/ws/model.mlirbc'), false);
});
