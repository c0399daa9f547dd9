module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'retrieval-worker',
  rootDir: __dirname,
};
