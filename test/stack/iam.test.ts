import { describe, expect, it } from 'vitest';
import { grants } from './iam.ts';

// The least-privilege tests are only as strong as this matcher: it must see through wildcards.
describe('grants', () => {
  it.each([
    { pattern: 's3:PutObject', action: 's3:PutObject', expected: true },
    { pattern: 'S3:putobject', action: 's3:PutObject', expected: true },
    { pattern: 's3:*', action: 's3:DeleteObject', expected: true },
    { pattern: '*', action: 's3:DeleteObject', expected: true },
    { pattern: 's3:Delete*', action: 's3:DeleteObject', expected: true },
    { pattern: 's3:DeleteObj?ct', action: 's3:DeleteObject', expected: true },
    { pattern: 's3:*Object', action: 's3:DeleteObject', expected: true },
    { pattern: 's3:PutObjectTagging', action: 's3:PutObject', expected: false },
    { pattern: 's3:Put*', action: 's3:DeleteObject', expected: false },
    { pattern: 's3:GetObject*', action: 's3:DeleteObject', expected: false },
    { pattern: 'sqs:DeleteMessage', action: 's3:DeleteObject', expected: false },
  ])('$pattern grants $action: $expected', ({ pattern, action, expected }) => {
    // Act
    const granted = grants(pattern, action);

    // Assess
    expect(granted).toBe(expected);
  });

  it.each([
    { pattern: 's3:DeleteObject*', family: 's3:DeleteObject*', expected: true },
    { pattern: 's3:DeleteObjectVersion', family: 's3:DeleteObject*', expected: true },
    { pattern: 's3:DeleteObject', family: 's3:DeleteObject*', expected: true },
    { pattern: 's3:Del*', family: 's3:DeleteObject*', expected: true },
    { pattern: 's3:*', family: 's3:PutObject*', expected: true },
    { pattern: 's3:PutObjectRetention', family: 's3:PutObject*', expected: true },
    { pattern: 's3:Abort*', family: 's3:DeleteObject*', expected: false },
    { pattern: 's3:ListBucket', family: 's3:PutObject*', expected: false },
    { pattern: 's3:PutBucketPolicy', family: 's3:PutObject*', expected: false },
  ])('$pattern grants a member of $family: $expected', ({ pattern, family, expected }) => {
    // Act
    const granted = grants(pattern, family);

    // Assess
    expect(granted).toBe(expected);
  });
});
